"""Issue 38.1b: a launch's duration no ncu writes is refused in one line naming the file, the launch
or cell and the metric, exit 2: longer than a day (1e21 s), shorter than a picosecond (1e-309 s, a
subnormal float whose inverse is infinite), or in digits other than 0-9 (Python's float() reads
"１２３" as 123). A blank unit stays ncu's base unit (ns): real ncu prints blank units for a GPU it
does not know (tests/core/test_real_ncu.py). Every file is a real fixture with one cell edited; what
is accepted is checked against Python's csv module."""

from __future__ import annotations

import csv
import io
import json

import pytest

from ..conftest import fixture_path
from ..helpers.cli import run_in_process
from ..helpers.mutate import Table, read_table

RAW = "b200_torch_sdpa_auto_raw.csv"  # gpu__time_duration.sum in ns, a units row
DETAILS = "t4_nsightful_copy_blocked_details.csv"  # one Duration row per launch, its unit beside it


def _refused(path, *words) -> str:
    code, out, err = run_in_process("report", path)
    assert (code, out) == (2, ""), err
    lines = err.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith(f"flopscope: {path}: "), err
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in err
    return lines[0]


def _details_duration(value: str, unit: str) -> Table:
    """The details page with its first launch's Duration row set to VALUE in UNIT."""
    table = read_table(fixture_path(DETAILS))
    names, units, values = (
        table.col("Metric Name"),
        table.col("Metric Unit"),
        table.col("Metric Value"),
    )
    row = next(r for r in table.rows if r[names] == "Duration")
    row[units], row[values] = unit, value
    return table


@pytest.mark.parametrize(
    ("value", "shown"), [("1e21", "1e+21 s"), ("1e-309", "1e-309 s"), ("90000", "90000 s")]
)
def test_details_duration_past_a_day_or_under_a_picosecond_is_refused(tmp_path, value, shown):
    path = _details_duration(value, "s").write(tmp_path / "duration.csv")
    _refused(path, "launch 0", "gpu__time_duration.sum", shown, "between 1 ps and a day")


@pytest.mark.parametrize("value", ["1e21", "1e-300"])  # in ns: 1e12 s, and 1e-309 s
def test_raw_duration_outside_what_a_launch_takes_is_refused(tmp_path, value):
    table = read_table(fixture_path(RAW))
    table.rows[5][table.col("gpu__time_duration.sum")] = value
    path = table.write(tmp_path / "raw.csv")
    _refused(path, f"launch {table.rows[5][0]}", "gpu__time_duration.sum", "between 1 ps and a day")


def test_an_hour_long_launch_is_read(tmp_path):
    """The bound is no tighter than it says: a launch of an hour (3600 s) reads, and the total adds
    up."""
    table = _details_duration("3,600", "second")
    path = table.write(tmp_path / "hour.csv")
    code, out, err = run_in_process("report", "--json", path)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(fixture_path(DETAILS).read_text(encoding="utf-8-sig"))))
    durations = [
        float(r["Metric Value"].replace(",", "")) for r in rows if r["Metric Name"] == "Duration"
    ]
    assert {r["Metric Unit"] for r in rows if r["Metric Name"] == "Duration"} == {"ns"}
    expected = 3600 + sum(durations[1:]) * 1e-9
    assert json.loads(out)["meta"]["summary"]["total_time_s"] == pytest.approx(expected)


@pytest.mark.parametrize("digits", ["１２３", "١٢٣", "1２3.5"])  # fullwidth, Arabic-Indic, mixed
def test_duration_in_digits_other_than_ascii_is_refused(tmp_path, digits):
    assert float(digits) > 0  # what made them pass: Python reads them as numbers
    table = read_table(fixture_path(RAW))
    table.rows[2][table.col("gpu__time_duration.sum")] = digits
    _refused(table.write(tmp_path / "raw.csv"), repr(digits), "digits other than 0-9")
    details = _details_duration(digits, "ns").write(tmp_path / "details.csv")
    _refused(details, repr(digits), "digits other than 0-9")
