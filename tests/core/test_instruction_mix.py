"""Issue 42.5: the instruction mix. Warp instructions executed (in all and per kind), pipe
utilisation, SM busy and IPC are columns of the canonical table (`inst_*`, `pipe_*_pct`,
`sm_busy_pct`, `ipc_active`) and the Kernel screen's Instruction mix and Pipe utilisation panels;
every launch of every full-set report we hold is read here against NVIDIA's own readings of the file
(ncu_report, `ncu --import --page raw --csv` and `--page details --csv`), never flopscope's
reader."""

from __future__ import annotations

import csv
import io
import math

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.metrics import INSTRUCTION_MIX, ISSUE, PIPES
from flopscope.tui.presentation import format as fmt
from flopscope.tui.presentation.kernel_sections import sections

from ..conftest import FIXTURES, fixture_path
from ..helpers.cli import launches_json
from ..helpers.ncu_pages import ncu_csv
from ..helpers.ncu_report_columns import assert_columns_are_ncu_reports

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep")) if FIXTURES.is_dir() else []
# Every column the panels show, with the one ncu metric it is (PIPES and ISSUE name one metric
# each).
SHOWN = {**INSTRUCTION_MIX, **{c: m[0] for c, m in {**PIPES, **ISSUE}.items()}}
# The panel's lines for the instruction kinds, by column.
KINDS = {
    "inst_global_ld": "Global loads",
    "inst_global_st": "Global stores",
    "inst_shared_ld": "Shared loads",
    "inst_shared_st": "Shared stores",
    "inst_local_ld": "Local loads",
    "inst_local_st": "Local stores",
    "inst_branch": "Branches",
}


def ncu_page(real_ncu, path, page: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(ncu_csv(real_ncu, path, page))))


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_instruction_mix_is_ncu_reports_own(name):
    assert_columns_are_ncu_reports(fixture_path(name), SHOWN)


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_instruction_mix_is_what_ncu_import_prints(name, real_ncu):
    path = fixture_path(name)
    table = ncu_page(real_ncu, path, "raw")[1:]  # the row after the header: units
    rows = launches_json(path)
    assert len(table) == len(rows)
    compared = 0
    for printed, row in zip(table, rows, strict=True):
        # ncu could not profile it: no values (ncu prints some zeros)
        if row["status"] not in (None, "", "ok"):
            continue
        for column, metric in SHOWN.items():
            cell = printed.get(metric, "").replace(",", "")
            if cell in ("", "n/a"):
                assert row.get(column) is None, column
                continue
            # ncu prints counts whole and percentages to 2 decimals (3 significant digits for small
            # ones)
            assert row[column] == pytest.approx(float(cell), rel=5e-3, abs=6e-3), column
            compared += 1
    assert compared >= len(rows) * 10


@pytest.mark.parametrize("name", FULL)
def test_executed_instructions_ipc_and_sm_busy_are_ncus_details_page(name, real_ncu):
    """The Instruction Statistics and Compute Workload Analysis sections as ncu prints them, per
    launch."""
    path = fixture_path(name)
    details = ncu_page(real_ncu, path, "details")
    words = {
        ("Instruction Statistics", "Executed Instructions"): "inst_executed",
        ("Compute Workload Analysis", "Executed Ipc Active"): "ipc_active",
        ("Compute Workload Analysis", "SM Busy"): "sm_busy_pct",
    }
    rows = {row["launch_id"]: row for row in launches_json(path)}
    ids = sorted({int(line["ID"]) for line in details})
    # ncu numbers the launches it printed from 0 or 1
    by_id = dict(zip(ids, sorted(rows), strict=True))
    compared = 0
    for line in details:
        column = words.get((line["Section Name"], line["Metric Name"]))
        if column is None:
            continue
        row = rows[by_id[int(line["ID"])]]
        scale = {"inst": 1, "Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9}.get(line["Metric Unit"], 1)
        expected = float(line["Metric Value"].replace(",", "")) * scale
        if math.isnan(expected):  # a launch ncu could not profile
            assert row[column] is None, (line["ID"], column)
            continue
        assert row[column] == pytest.approx(expected, rel=5e-3, abs=6e-3), (line["ID"], column)
        compared += 1
    profiled = sum(row["status"] in (None, "", "ok") for row in rows.values())
    assert compared >= profiled * 3 > 0


@pytest.mark.parametrize("name", FULL)
def test_the_panel_prints_ncus_numbers_for_every_launch(name, real_ncu):
    """The Instruction mix panel of each launch, against ncu's raw page: its counts, shares and
    busiest pipe."""
    path = fixture_path(name)
    table = ncu_page(real_ncu, path, "raw")[1:]
    report = read_report(path)
    launches = report.group("launch").set_index("launch_id")
    checked = 0
    for launch, printed in enumerate(table):
        if launch not in launches.index:
            continue
        executed = float(printed[INSTRUCTION_MIX["inst_executed"]].replace(",", "") or "nan")
        panel = dict(dict(sections(launches.loc[launch])).get("Instruction mix", []))
        if not executed or math.isnan(executed):
            continue
        assert panel["Executed"].startswith(f"{fmt.si(executed)} warp instructions"), panel[
            "Executed"
        ]
        for column, label in KINDS.items():
            count = float(printed.get(INSTRUCTION_MIX[column], "0").replace(",", "") or 0)
            if count:
                words = [*fmt.si(count).split(), fmt.pct(100 * count / executed)]
                assert panel[label].split()[: len(words)] == words, (label, panel[label])
            else:
                assert label not in panel
        pipes = {
            c: float(v) for c, m in PIPES.items() if (v := printed.get(m[0], "").replace(",", ""))
        }
        busiest = max(pipes.values())
        assert panel["Busiest pipe"].endswith(f", {fmt.pct(busiest)} of its peak"), (
            panel["Busiest pipe"],
            busiest,
        )
        checked += 1
    assert checked


def test_an_fp32_kernel_that_waits_on_loads_shows_its_lsu_pipe_busiest():
    """The T4 matrix add: FP32 FLOPs only, and half its instructions global loads and stores: LSU is
    busiest."""
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    row = report.group("name").iloc[0]
    assert row["flop_fp32"] > 0 and not row["flop_fp64"] and not row["flop_tensor"]
    panel = dict(dict(sections(row))["Instruction mix"])
    assert panel["Busiest pipe"].startswith("LSU pipe")
    assert panel["FLOPs"] == f"FP32 {fmt.si(row['flop_fp32'])}"


def test_a_group_sums_its_launches_counts():
    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    launches = report.group("launch")
    for _, group in report.group("name").iterrows():
        mine = launches[launches["kernel_full"] == group["kernel_full"]]
        for column in INSTRUCTION_MIX:
            if column in mine and mine[column].notna().all():
                assert group[column] == pytest.approx(mine[column].sum(), rel=1e-12), column


def test_a_basic_report_says_what_collects_the_instruction_mix():
    report = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    panels = dict(sections(report.group("name").iloc[0]))
    assert "Instruction mix" not in panels
    missing = dict(panels["Not collected"])
    assert (
        missing["Instruction mix"]
        == "ncu --section InstructionStats --section ComputeWorkloadAnalysis --section"
        " SourceCounters"
    )
    assert "--set full" in missing[""]
