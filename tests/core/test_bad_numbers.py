"""Issue 24: no silently wrong number. Units are checked against what each metric measures,
impossible counters and conflicting duplicates are refused in one line, and huge or non-finite
values never print as results or crash. Every damaged file is a real fixture with one edit."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

import pytest
from flopscope.core.common.si_format import si
from flopscope.core.common.units import UnitError, metric_unit_factor

from ..conftest import fixture_path
from ..helpers.cli import run_in_process
from ..helpers.mutate import Table, read_table

RAW = "b200_torch_sdpa_auto_raw.csv"  # 16 launches, gpu__time_duration.sum in ns
DETAILS = "t4_nsightful_copy_blocked_details.csv"


def _raw() -> Table:
    return read_table(fixture_path(RAW))


def _details() -> Table:
    return read_table(fixture_path(DETAILS))


def _refused(path, *words) -> str:
    """Exit 2 and one line on stderr naming the file and each of `words`; no table."""
    code, out, err = run_in_process("report", path)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().split("\n")
    assert len(lines) == 1, err
    assert str(path) in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("unit", ["furlong", "byte", "%", "Gbyte", "Ghz", "Xs", ""])
def test_time_in_a_unit_of_something_else_is_refused(tmp_path, unit):
    """`gpu__time_duration.sum` in bytes read as seconds said "Kernel time 177000 s"."""
    table = _raw()
    table.units[table.col("gpu__time_duration.sum")] = unit
    path = table.write(tmp_path / "units.csv")
    # blank: ncu's base unit for a duration (ns), as ncu prints it for a GPU it does not know
    if unit == "":
        code, out, _ = run_in_process("report", path, "--json")
        assert code == 0
        assert json.loads(out)["meta"]["summary"]["total_time_s"] == pytest.approx(
            sum(float(r[table.col("gpu__time_duration.sum")].replace(",", "")) for r in table.rows)
            * 1e-9
        )
        return
    line = _refused(path, "gpu__time_duration.sum", repr(unit), "time unit")
    assert "Kernel time" not in line


def test_details_duration_in_an_unknown_unit_is_refused(tmp_path):
    table = _details()
    units, names = table.col("Metric Unit"), table.col("Metric Name")
    for row in table.rows:
        if row[names] == "Duration":
            row[units] = "furlong"
    _refused(table.write(tmp_path / "details.csv"), "Duration", "'furlong'")


@pytest.mark.parametrize(
    ("metric", "unit", "factor"),
    [
        ("gpu__time_duration.sum", "usecond", 1e-6),
        ("gpu__time_duration.sum", "", 1e-9),
        ("dram__bytes_read.sum", "Mbyte", 1e6),
        ("dram__bytes.sum.per_second", "Gbyte/s", 1e9),
        ("smsp__cycles_elapsed.avg.per_second", "Ghz", 1e9),
        ("smsp__cycles_elapsed.avg.per_second", "cycle/nsecond", 1e9),
        ("sm__cycles_elapsed.avg.per_second", "cycle/second", 1),
        ("lts__t_sectors.sum.per_second", "sector/s", 1),
        ("dram__bytes.sum.peak_sustained", "byte/cycle", 1),
        ("launch__registers_per_thread", "register/thread", 1),
        ("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed", "cycle", 1),
        ("lts__t_sectors.sum.pct_of_peak_sustained_elapsed", "%", 1),
        ("sm__inst_executed_pipe_tensor.sum", "Kinst", 1e3),
    ],
)
def test_units_ncu_prints_are_accepted(metric, unit, factor):
    """Every unit the fixtures and the H100 capture hold for a metric flopscope reads (and their
    prefixed forms)."""
    assert metric_unit_factor(metric, unit) == pytest.approx(factor)


@pytest.mark.parametrize(
    ("metric", "unit"),
    [
        ("dram__bytes.sum", "usecond"),
        ("dram__bytes.sum.per_second", "Ghz"),
        ("dram__bytes.sum", "MB"),
        ("smsp__cycles_elapsed.avg.per_second", "Xhz"),
        ("lts__t_sectors.sum.pct_of_peak_sustained_elapsed", "byte"),
        ("sm__inst_executed_pipe_tensor.sum", "second"),
    ],
)
def test_mismatched_units_raise(metric, unit):
    with pytest.raises(UnitError):
        metric_unit_factor(metric, unit)


@pytest.mark.parametrize("value", ["-10,080", "inf", "-inf", "1e308", "1e40"])
def test_an_impossible_counter_refuses_the_file(tmp_path, value):
    """ "Kernel time -177 us" was printed with exit 0."""
    table = _raw()
    table.rows[3][table.col("gpu__time_duration.sum")] = value
    line = _refused(
        table.write(tmp_path / "bad.csv"), "gpu__time_duration.sum", f"launch {table.rows[3][0]}"
    )
    assert "damaged" in line


@pytest.mark.parametrize("value", ["inf", "nan", "1e308", "-5", "1.7976931348623157e308"])
def test_every_numeric_cell_damaged(tmp_path, value):
    """NaN/inf/1e308 in every numeric cell of a raw or details page: pandas' cast raised a
    traceback."""
    raw = _raw()
    numeric = [k for k, h in enumerate(raw.header) if "__" in h]
    for row in raw.rows:
        for k in numeric:
            row[k] = value
    details = _details()
    for row in details.rows:
        row[details.col("Metric Value")] = value
    for path in (raw.write(tmp_path / "raw.csv"), details.write(tmp_path / "details.csv")):
        code, out, err = run_in_process("report", path)
        if value == "nan":  # ncu's "n/a": missing values, said so on stderr
            # a word, not a substring: a one-row report ends with ncu's rule texts ("information")
            assert code == 0 and not re.search(r"\binf\b", out) and "∞" not in out
        else:
            assert code == 2 and len(err.strip().split("\n")) == 1, err


@pytest.mark.parametrize("value", ["inf", "1e20", "1e308", "-inf"])
def test_non_integer_stream_ids_do_not_crash(tmp_path, value):
    """`inf` or 1e20 in the Stream column: whole_numbers raised OverflowError / TypeError."""
    table = _raw()
    table.rows[0][table.col("Stream")] = value
    code, out, err = run_in_process("report", table.write(tmp_path / "stream.csv"), "--json")
    assert code == 0, err
    json.loads(out, parse_constant=_no_constant)


def test_conflicting_duplicate_column_names_both_values(tmp_path):
    """A duplicated metric column whose copy says 1000x more: the last one silently won (177 us
    became 177 ms)."""
    table = _raw()
    t = table.col("gpu__time_duration.sum")
    table.header.append("gpu__time_duration.sum")
    table.units.append(table.units[t])
    for row in table.rows:
        row.append(str(float(row[t].replace(",", "")) * 1000))
    first = float(table.rows[0][t].replace(",", "")) * 1e-9
    line = _refused(
        table.write(tmp_path / "dup.csv"),
        "gpu__time_duration.sum",
        f"{first:g}",
        f"{first * 1000:g}",
    )
    assert f"launch {table.rows[0][0]}" in line


def test_identical_duplicates_are_fine(tmp_path):
    table = _raw()
    t = table.col("gpu__time_duration.sum")
    table.header.append("gpu__time_duration.sum")
    table.units.append(table.units[t])
    for row in table.rows:
        row.append(row[t])
    details = _details()
    details.rows.insert(5, list(details.rows[5]))
    for path in (table.write(tmp_path / "raw.csv"), details.write(tmp_path / "details.csv")):
        code, _, err = run_in_process("report", path)
        assert code == 0, err


def test_conflicting_duplicate_details_row(tmp_path):
    """The same launch's Duration twice, once in msecond: 1000x apart."""
    details = _details()
    names, units, values = (
        details.col("Metric Name"),
        details.col("Metric Unit"),
        details.col("Metric Value"),
    )
    at = next(i for i, r in enumerate(details.rows) if r[names] == "Duration")
    twin = list(details.rows[at])
    assert twin[units] in ("usecond", "nsecond", "us", "ns", "msecond")
    twin[units] = "second"
    details.rows.insert(at + 1, twin)
    seconds = float(twin[values].replace(",", ""))
    _refused(details.write(tmp_path / "dup.csv"), "Duration", "twice", f"{seconds:g}")


@pytest.mark.parametrize("value", [1.7976931348623157e308, -1.7976931348623157e308, 1e21, 5e300])
def test_si_never_overflows(value):
    """A value near the largest double rounds to inf in si's 3-digit rounding: significant() raised
    OverflowError."""
    text = si(value, "B")
    assert "inf" not in text and "∞" not in text
    assert Decimal(text.split()[0]) == Decimal(f"{value:.2e}")


def test_huge_but_finite_counters_print_no_infinity(tmp_path):
    """Bytes of 1e29 over a duration of 1e-290 cycles at the SM clock: the rate overflows to inf in
    float64, which printed as "∞ B/s" and "inf%" and went into JSON as Infinity. It is unknown
    instead; JSON is strict."""
    # a details page with DRAM bytes
    raw = read_table(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    names, values = raw.col("Metric Name"), raw.col("Metric Value")
    for row in raw.rows:
        if row[names] == "dram__bytes.sum":
            row[values] = "1e29"
        # this page has no duration: cycles over the clock give it
        if row[names] == "sm__cycles_elapsed.avg":
            row[values] = "1e-290"
    path = raw.write(tmp_path / "huge.csv")
    code, out, err = run_in_process("report", path)
    assert code == 0, err
    assert "∞" not in out + err and "inf" not in (out + err).lower().replace("info", "")
    code, out, _ = run_in_process("report", path, "--json")
    doc = json.loads(out, parse_constant=_no_constant)
    assert all(r["dram_bytes_per_s"] is None for r in doc["rows"])
    export = tmp_path / "out.json"
    assert run_in_process("export", path, "-o", export)[0] == 0
    json.loads(export.read_text(), parse_constant=_no_constant)


def _no_constant(name: str):
    raise AssertionError(f"{name} in JSON output: not strict JSON")


def test_no_numpy_warnings(tmp_path, recwarn):
    test_huge_but_finite_counters_print_no_infinity(tmp_path)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)], [
        str(w.message) for w in recwarn
    ]


def test_nan_cells_are_missing_not_numbers():
    # documents the rule: NaN (ncu's n/a) is a missing value, never refused
    assert math.isnan(float("nan"))
