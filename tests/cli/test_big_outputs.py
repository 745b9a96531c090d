"""Long runs through every output path: a printed table caps its rows and says so, `--json` and
exports keep them all. Built from real launches (tests/raw_csv.py), repeated with fresh launch
IDs."""

from __future__ import annotations

import json

import pytest

from ..conftest import fixture_path
from ..helpers.cli import run_in_process
from ..helpers.raw_csv import launches, raw_csv

N = 1205  # past the printed table's 1000 rows


@pytest.fixture(scope="module")
def long_page(tmp_path_factory):
    real = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    rows = [{**real[i % len(real)], "ID": str(i)} for i in range(N)]
    path = tmp_path_factory.mktemp("long") / "long_raw.csv"
    path.write_text(raw_csv(rows))
    return path


def _table_rows(out: str) -> int:
    """Lines between the table's title row and its `N row(s)` footer."""
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.split()[:2] == ["Kernel", "ID"])
    footer = next(i for i, line in enumerate(lines) if " row(s) · " in line)
    return footer - title - 1


def test_a_long_launch_table_prints_its_first_rows_and_says_how_many_it_left_out(long_page):
    code, out, err = run_in_process("report", long_page, "--by", "launch", "--no-cache")
    assert code == 0
    assert _table_rows(out) == 1000
    assert f"showing the first 1000 of {N:,} rows" in err and "--all" in err and "--top N" in err
    assert len(err.strip().splitlines()) >= 1


def test_all_prints_every_row_and_top_its_number_without_the_note(long_page):
    code, out, err = run_in_process("report", long_page, "--by", "launch", "--all", "--no-cache")
    assert code == 0 and _table_rows(out) == N and "showing the first" not in err
    code, out, err = run_in_process(
        "report", long_page, "--by", "launch", "--top", "1100", "--no-cache"
    )
    assert code == 0 and _table_rows(out) == 1100 and "showing the first" not in err


def test_json_has_every_row(long_page):
    code, out, err = run_in_process("report", long_page, "--by", "launch", "--json", "--no-cache")
    assert code == 0 and len(json.loads(out)["rows"]) == N and "showing the first" not in err
