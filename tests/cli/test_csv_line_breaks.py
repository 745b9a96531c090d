"""Names with line breaks in a CSV export: a bare CR ends a row for spreadsheets and for every CSV
reader, so a cell holding one is quoted, and each line inside a cell is defused as a cell's start is
(issue 38: `\\r=1+1` was written unquoted and read back as a second row starting with a formula)."""

from __future__ import annotations

import csv

import pandas as pd
import pyarrow.csv as pacsv
import pytest
from flopscope.core.export.write import write_table

from ..conftest import fixture_path
from ..helpers.cli import run_cli
from ..helpers.raw_csv import launches, raw_csv

NAMES = ["cr\r=1+1", "lf\n@SUM(1)", "crlf\r\n+cmd|' /C calc'!A0", "tab\r\t=x", "plain\rtext", "ok"]
FORMULA = ("=", "+", "-", "@", "\t")


def _readers(path) -> dict[str, list[str]]:
    """The kernel names as three real readers read the file back."""
    with open(path, newline="") as handle:
        by_csv = [row["kernel_full"] for row in csv.DictReader(handle)]
    by_pandas = pd.read_csv(path, keep_default_na=False)["kernel_full"].tolist()
    options = pacsv.ParseOptions(newlines_in_values=True)
    by_arrow = pacsv.read_csv(path, parse_options=options).column("kernel_full").to_pylist()
    return {"csv": by_csv, "pandas": by_pandas, "pyarrow": by_arrow}


def _lines_defused(name: str) -> bool:
    return not any(line.startswith(FORMULA) for line in name.replace("\r", "\n").split("\n"))


def test_each_name_reads_back_as_one_row_in_every_reader_with_every_line_defused(tmp_path):
    rows = pd.DataFrame(
        {"kernel_full": NAMES, "duration_s": [1e-6 * (i + 1) for i in range(len(NAMES))]}
    )
    out = write_table(rows, tmp_path / "out.csv")
    for reader, names in _readers(out).items():
        assert len(names) == len(NAMES), reader
        assert all(_lines_defused(n) for n in names), (reader, names)
        # only the `'` added ahead of formula-like lines differs from the name written
        assert [n.replace("'", "") for n in names] == [n.replace("'", "") for n in NAMES], reader


def test_raw_csv_keeps_the_names_but_still_one_row_each(tmp_path):
    rows = pd.DataFrame({"kernel_full": NAMES, "duration_s": 1e-6})
    out = write_table(rows, tmp_path / "out.csv", raw_csv=True)
    for reader, names in _readers(out).items():
        assert names == NAMES, reader


def test_the_cli_export_of_a_report_with_such_names(tmp_path):
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))[: len(NAMES)]
    for row, name in zip(rows, NAMES, strict=True):
        row["Kernel Name"] = name
    page = tmp_path / "page.csv"
    page.write_text(raw_csv(rows), newline="")
    done = run_cli("export", page, "--by", "launch", "-o", tmp_path / "out.csv")
    assert done.returncode == 0, done.stderr
    for reader, names in _readers(tmp_path / "out.csv").items():
        assert len(names) == len(NAMES) and all(_lines_defused(n) for n in names), reader


@pytest.mark.parametrize("name", NAMES)
def test_a_single_cell_never_breaks_its_row(name, tmp_path):
    out = write_table(pd.DataFrame({"kernel_full": [name], "x": [1]}), tmp_path / "one.csv")
    with open(out, newline="") as handle:
        assert len(list(csv.reader(handle))) == 2
