"""The suite's xdist scheduling: the tests of one real report share a worker."""

from __future__ import annotations

import pytest

from .helpers.real_files import DEMO, H100, file_id
from .helpers.report_scheduling import ByReport

pytest.importorskip("xdist")


def scope(nodeid: str) -> str:
    return ByReport._split_scope(ByReport.__new__(ByReport), nodeid)


def test_the_tests_of_one_report_share_a_scope_and_others_have_their_own():
    capture = file_id(H100 / "train_transformer_bf16_bs8.ncu-rep.xz")
    one = f"tests/app/test_one_truth.py::test_every_row[{capture}]"
    two = f"tests/core/test_distinct_names.py::test_app_table[{capture}-120]"
    assert scope(one) == scope(two) == capture
    # the demo has the H200 capture's file name: its own scope, not the capture's
    demo = f"tests/core/test_grouping.py::test_each_group[{file_id(DEMO)}]"
    assert scope(demo) == file_id(DEMO) != scope(one)
    plain = "tests/core/test_units_and_gpus.py::test_unit_factor[GB/s]"
    assert scope(plain) == plain
