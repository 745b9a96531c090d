"""Cases the long fuzz run (benchmarks/fuzz_long.py) broke, replayed: each input is built here from
a real fixture and the mutation the run drew, then run through the CLI under the fuzz rule
(tests/helpers/fuzz_cases.run: exit 0 with a sane table or exit 2 with one line naming the file; no
traceback, no numpy warning)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from ..conftest import fixture_path
from ..helpers import fuzz_cases
from ..helpers.mutate import read_table

# one launch; Block/Grid Size as header cells and metric rows
T4_DETAILS = "t4_nsightful_copy_blocked_details.csv"
RTX5090_DETAILS = "rtx5090_dsocr_cutlass_gemm_details.csv"  # dram__bytes_write.sum in Kbyte


def _run(tmp_path, path, command: str) -> tuple[int, str, str]:
    case = fuzz_cases.Case(path.name, "replay", "none", command, path)
    return fuzz_cases.run(case, tmp_path)


@pytest.mark.parametrize("command", ["json", "report", "parquet"])
def test_details_page_without_its_block_size_column(tmp_path, command):
    """Seed 0, cases 371 and 968 (drop_column): with the header's Block Size gone, the launch's
    Block Size metric row gave a `block` column and its Grid Size row a second `grid` beside the
    header's: pandas raised "Cannot set a DataFrame with multiple columns to the single column
    grid". The header's cell wins, as the row-by-row reader has it; the metric row fills the missing
    one."""
    table = read_table(fixture_path(T4_DETAILS))
    k = table.col("Block Size")
    for row in [table.header, *table.rows]:
        del row[k]
    path = table.write(tmp_path / "no_block_size.csv")
    code, out, _ = _run(tmp_path, path, command)
    assert code == 0
    if command == "json":
        source = list(
            csv.DictReader(io.StringIO(fixture_path(T4_DETAILS).read_text(encoding="utf-8-sig")))
        )
        (row,) = json.loads(out)["rows"]
        assert row["grid"] == source[0]["Grid Size"]
        assert row["block"] == next(
            r["Metric Value"] for r in source if r["Metric Name"] == "Block Size"
        )


@pytest.mark.parametrize("command", ["report", "csv"])
def test_details_value_that_overflows_in_its_unit_is_refused_without_a_warning(tmp_path, command):
    """Seed 0, cases 267, 826, 1027, 1058 (number_column): 1.7976931348623157e308 Kbyte overflows to
    inf bytes; numpy printed "RuntimeWarning: overflow encountered in multiply" before the refusal
    of the infinite count."""
    table = read_table(fixture_path(RTX5090_DETAILS))
    names, values = table.col("Metric Name"), table.col("Metric Value")
    row = next(r for r in table.rows if r[names] == "dram__bytes_write.sum")
    row[values] = "1.7976931348623157e308"
    path = table.write(tmp_path / "overflow.csv")
    code, _, err = _run(tmp_path, path, command)
    assert code == 2
    assert "dram__bytes_write.sum is inf (not finite" in err


def test_details_page_whose_longest_launch_has_no_id(tmp_path):
    """Seed 0, case 1860 (garbage_cell): the gpu__time_duration.sum row's ID cell made a byte-order
    mark, so that row is a launch of its own with a missing launch_id, the longest of its group; the
    rules section under `open --no-tui`'s table raised "cannot convert float NaN to integer". It
    says the row names no launch instead."""
    table = read_table(fixture_path("rtx5070_win_bom_crlf_details.csv"))
    names = table.col("Metric Name")
    next(r for r in table.rows if r[names] == "gpu__time_duration.sum")[table.col("ID")] = "\ufeff"
    path = table.write(tmp_path / "no_id.csv")
    code, out, _ = _run(tmp_path, path, "open")
    assert code == 0
    assert "none: the row names no launch of this report" in out
