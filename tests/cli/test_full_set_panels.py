"""Issue 42.6: `flopscope profile --metrics full` collects what every Kernel-screen panel needs. It
asks ncu for its `full` set; ncu itself (`--list-sets`, `--list-sections`, no GPU needed) says which
sections that set holds, and the project's own `--metrics full` capture on an H100
(tests/data/gpu/nvidia_h100_80gb_hbm3/gemm_bf16_full.*) fills every panel. What the extra passes
cost is `--plan`'s, checked in tests/cli/test_plan.py against the 38 passes per launch ncu printed
for that run."""

from __future__ import annotations

import csv
import gzip
import json
import re
import subprocess

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.command import ProfileOptions, ncu_argv
from flopscope.core.ncu.panel_sections import PANEL_SECTIONS
from flopscope.core.readers.ncu_rep_source import read_source
from flopscope.tui.presentation.kernel_sections import sections

from ..conftest import fixture_path
from ..helpers.cli import run_cli as flopscope
from ..helpers.real_files import H100

CAPTURE = H100 / "gemm_bf16_full.ncu-rep.xz"
NEEDED = sorted({s for needed in PANEL_SECTIONS.values() for s in needed})


def listed(real_ncu, what: str) -> list[list[str]]:
    """ncu's `--list-sets` / `--list-sections` table as rows of cells, a cell wrapped over lines
    joined again."""
    out = subprocess.run([*real_ncu, what], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"[- ]+", line) and "-" in line]
    widths = [len(dashes) for dashes in lines[rules[0]].split(" ")]
    rows: list[list[str]] = []
    for line in lines[rules[1] + 1 :]:
        if not line.strip():
            continue
        cells, at = [], 0
        for width in widths:
            cells.append(line[at : at + width])
            at += width + 1
        if cells[0].strip():
            rows.append([c.strip() for c in cells])
        else:  # the same row's cells, wrapped: ncu cuts a long cell mid-word
            rows[-1] = [
                f"{a}{b.rstrip()}" if b.strip() else a for a, b in zip(rows[-1], cells, strict=True)
            ]
    return rows


def test_metrics_full_asks_ncu_for_its_full_set():
    argv = ncu_argv(ProfileOptions(metrics="full", command=["./app"]), "report")
    at = argv.index("--set")
    assert argv[at + 1] == "full" and "--metrics" not in argv
    # ... and so did the H100 run the capture below comes from
    run = json.loads((H100 / "plan" / "run_full.json").read_text())
    assert run["ncu_argv"][run["ncu_argv"].index("--set") + 1] == "full"


def test_ncus_full_set_holds_every_section_the_panels_read(real_ncu):
    sets = {row[0]: row[1] for row in listed(real_ncu, "--list-sets")}
    full = {s.strip() for s in sets["full"].split(",")}
    assert set(NEEDED) <= full, sorted(set(NEEDED) - full)
    # so a basic report lacks them
    assert not set(NEEDED) <= {s.strip() for s in sets["basic"].split(",")}
    known = {row[0] for row in listed(real_ncu, "--list-sections")}
    assert set(NEEDED) <= known


def test_the_full_capture_holds_those_sections_by_ncus_own_print(real_ncu):
    """The capture's details page (ncu's `--page details --csv` of it) names each section, by its
    identifier or the display name `--list-sections` gives it."""
    display = {row[0]: row[1] for row in listed(real_ncu, "--list-sections")}
    with gzip.open(H100 / "gemm_bf16_full.details.csv.gz", "rt") as f:
        printed = {line["Section Name"] for line in csv.DictReader(f)}
    for section in NEEDED:
        assert display[section] in printed or section in printed, section


def test_a_metrics_full_capture_fills_every_panel():
    report = read_report(CAPTURE)
    for _, row in report.group("launch").iterrows():
        panels = dict(sections(row))
        for title in PANEL_SECTIONS:
            if title == "Source":
                continue
            assert title in panels, (title, list(panels))
        page = read_source(CAPTURE, int(row["launch_id"]))
        assert page.samples > 0 and page.lines, "SourceCounters: warp samples per SASS line"


def test_the_json_of_a_full_capture_has_every_panels_columns():
    out = flopscope("report", CAPTURE, "--by", "launch", "--json")
    assert out.returncode == 0, out.stderr
    for row in json.loads(out.stdout)["rows"]:
        for column in (
            "sol_sm_pct",
            "occupancy_achieved_pct",
            "mem_l2_sectors",
            "inst_executed",
            "pipe_lsu_pct",
        ):
            assert row[column] is not None, column
        assert any(row[c] for c in row if c.startswith("stall_")), "warp stalls"


@pytest.mark.parametrize("panel", [p for p in PANEL_SECTIONS if p != "Source"])
def test_a_basic_report_has_each_panel_or_says_which_sections_collect_it(panel):
    """A `--set basic` report (SpeedOfLight, Occupancy, LaunchStats, WorkloadDistribution) fills the
    panels of those sections, and its Not collected panel names the sections of every other."""
    report = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    panels = dict(sections(report.group("name").iloc[0]))
    missing = dict(panels["Not collected"])
    # `Warp stalls, cycles per issued instruction` is listed as `Warp stalls`
    label = panel.split(",")[0]
    if set(PANEL_SECTIONS[panel]) <= {
        "SpeedOfLight",
        "Occupancy",
        "LaunchStats",
        "WorkloadDistribution",
    }:
        assert panel in panels and label not in missing
    else:
        assert panel not in panels
        assert missing[label] == "ncu " + " ".join(f"--section {s}" for s in PANEL_SECTIONS[panel])


def test_a_full_capture_has_nothing_not_collected():
    report = read_report(CAPTURE)
    assert "Not collected" not in dict(sections(report.group("name").iloc[0]))
