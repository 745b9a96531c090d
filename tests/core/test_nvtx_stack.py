"""Each launch's NVTX stack in the kernels table (`nvtx_stack`), from every real file in every
format it exists in, against the ranges read from ncu's own page with `csv` alone (a .ncu-rep's page
exported by the real ncu): per domain, the ranges in order, each name whole, launch by launch."""

from __future__ import annotations

import pandas as pd
import pytest
from flopscope.core.common.nvtx_stack import decode_stack, encode_stack, stack_label
from flopscope.core.table.module_tree import module_tree

from ..helpers.nvtx_cells import ncu_stacks
from ..helpers.real_files import file_id, real_files, report_of

FILES = real_files()


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_each_launchs_nvtx_stack_is_its_ranges_on_ncus_page_name_by_name(path, request, tmp_path):
    ncu = request.getfixturevalue("real_ncu") if ".ncu-rep" in path.name else []
    expected = ncu_stacks(path, ncu, tmp_path)
    kernels = report_of(path).kernels
    got = {
        int(i): dict(decode_stack(s))
        for i, s in zip(kernels["launch_id"], kernels["nvtx_stack"], strict=True)
    }
    assert got.keys() == expected.keys()
    wrong = [i for i in got if got[i] != expected[i]]
    assert not wrong, f"launch {wrong[0]}: {got[wrong[0]]} != the page's {expected[wrong[0]]}"


def test_the_files_compared_hold_nested_ranges_with_colons_in_each_format():
    """What the test above covers: emit_nvtx's `aten::` ranges nested deep in a raw page and in a
    .ncu-rep, and ranges in a details page."""

    def deepest(path) -> tuple[int, bool]:
        stacks = [decode_stack(s) for s in report_of(path).kernels["nvtx_stack"].dropna()]
        names = [r for stack in stacks for _, ranges in stack for r in ranges]
        return max((len(r) for stack in stacks for _, r in stack), default=0), any(
            "::" in n for n in names
        )

    kinds = {
        "raw": (".csv.gz",),
        "ncu-rep": (".ncu-rep.xz", ".ncu-rep"),
        "details": (".details.csv.gz",),
    }
    for kind, suffixes in kinds.items():
        held = [deepest(p) for p in FILES if p.name.endswith(suffixes)]
        assert any(depth > 0 for depth, _ in held), kind
        if kind != "details":
            assert any(depth > 3 and colons for depth, colons in held), kind


def test_a_name_with_separators_or_control_characters_stays_one_range():
    text = encode_stack([("<default domain>", ["a/b", "c:d", "x\x1fy"]), ("mine", ["e | f"])])
    assert decode_stack(text) == (("", ("a/b", "c:d", "x\ufffdy")), ("mine", ("e | f",)))
    assert stack_label(text) == "a/b/c:d/x\ufffdy | mine:e | f"
    assert encode_stack([("", [])]) is None and decode_stack(None) == ()


def test_a_table_stored_without_the_stack_gets_the_same_module_tree_from_its_labels():
    """A run stored before `nvtx_stack`: its tree from the joined `nvtx` labels (no name there holds
    `/`)."""
    report = report_of(next(p for p in FILES if p.name == "train_transformer_bf16_bs8.ncu-rep.xz"))
    with_stack = module_tree(report.kernels, report.judged_by)
    without = module_tree(report.kernels.drop(columns=["nvtx_stack"]), report.judged_by)
    assert len(with_stack) > 10
    pd.testing.assert_frame_equal(with_stack, without)
