"""Issue 42.3: the memory chart. Its counts are columns of the canonical table (`mem_*`), read here
against NVIDIA's own readings of every full-set report (ncu_report, and `ncu --import --page raw
--csv`); the chart's hit rates, which flopscope makes from those counts, are checked against the
hit-rate metrics ncu computed itself."""

from __future__ import annotations

import csv
import io
import re

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.metrics import MEMORY_CHART
from flopscope.tui.presentation import format as fmt
from flopscope.tui.presentation.kernel_sections import sections

from ..conftest import FIXTURES, fixture_path
from ..helpers.accounting import counter, report_actions
from ..helpers.cli import launches_json
from ..helpers.ncu_pages import ncu_csv
from ..helpers.ncu_report_columns import assert_columns_are_ncu_reports, measured

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_memory_counts_are_ncu_reports_own(name):
    assert_columns_are_ncu_reports(fixture_path(name), MEMORY_CHART)


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_memory_counts_are_what_ncu_import_prints(name, real_ncu):
    path = fixture_path(name)
    table = list(csv.DictReader(io.StringIO(ncu_csv(real_ncu, path))))
    units, table = table[0], table[1:]
    rows = launches_json(path)
    for printed, row in zip(table, rows, strict=True):
        if row["status"] not in (None, "", "ok"):
            continue
        for column, metric in MEMORY_CHART.items():
            cell = printed.get(metric, "").replace(",", "")
            if cell in ("", "n/a"):
                continue
            scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(units[metric], 1)
            assert row[column] == pytest.approx(float(cell) * scale, rel=5e-3), column


@pytest.mark.parametrize("name", FULL)
def test_the_charts_hit_rates_are_ncus_own(name):
    """flopscope divides hit sectors by sectors; ncu computed `..._hit_rate.pct` itself, per
    launch."""
    path = fixture_path(name)
    report = read_report(path)
    actions = report_actions(path)
    rows = report.group("launch").set_index("launch_id")
    checked = 0
    for launch, action in enumerate(actions):
        if launch not in rows.index:
            continue
        chart = dict(dict(sections(rows.loc[launch])).get("Memory chart", []))
        if not chart:
            continue
        l2 = counter(action, "lts__t_sector_hit_rate.pct")
        if measured(l2) and counter(action, "lts__t_sectors.sum"):
            assert f"hit {fmt.pct(l2)}" in chart["L2"], (chart["L2"], l2)
            checked += 1
        l1 = counter(action, "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")
        loads = counter(action, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
        if measured(l1) and loads:
            assert f"hit {fmt.pct(l1)}" in chart["Kernel → L1/TEX"], (chart["Kernel → L1/TEX"], l1)
            sectors = counter(action, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            assert f"({fmt.ratio(sectors / loads)} sectors/request)" in chart["Kernel → L1/TEX"]
            checked += 1
    assert checked, f"{name}: no launch with a memory chart"


def test_the_bandwidth_lines_are_bytes_over_time_against_the_levels_peak():
    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    row = report.group("name").iloc[0]
    chart = dict(dict(sections(row))["Memory chart"])
    rate = row["l2_bytes"] / row["duration_s"]
    expected = f"{fmt.si(rate, 'B/s')}, {fmt.pct(100 * rate / row['peak_l2_bytes_per_s'])} of"
    assert chart["L2 bandwidth"].startswith(expected)
    assert re.search(r"← [\d.]+ \w?B read, → [\d.]+ \w?B written", chart["L2 ⇄ DRAM"])


def test_a_basic_report_has_no_memory_chart():
    report = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    assert "Memory chart" not in dict(sections(report.group("name").iloc[0]))


def test_the_raw_csv_page_and_the_report_give_the_same_chart():
    """The H100 GEMM captured as a report and printed as ncu's raw page: the crossbar bytes are in
    `byte` there, which the CSV reader refused as a count before it knew them for bytes."""
    from ..helpers.real_files import H100

    report = read_report(H100 / "gemm_bf16_full.ncu-rep.xz").kernels
    page = read_report(H100 / "gemm_bf16_full.csv.gz").kernels
    for column in MEMORY_CHART:
        assert page[column].tolist() == pytest.approx(report[column].tolist(), rel=1e-6), column
