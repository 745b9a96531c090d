"""Issue 42.2: why warps stall. Every full-set report carries ncu's warp state reasons per launch;
they are columns of the canonical table (`stall_<reason>`, cycles per issued instruction), read here
against NVIDIA's own readings of the same file: its ncu_report module and `ncu --import FILE --page
raw --csv`, never flopscope's reader."""

from __future__ import annotations

import csv
import io
import math
import subprocess

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.stalls import STALL_REASONS, stall_metric
from flopscope.tui.presentation.kernel_sections import sections

from ..conftest import FIXTURES, fixture_path
from ..helpers.accounting import report_actions
from ..helpers.cli import launches_json

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_stalls_are_ncu_reports_own(name):
    path = fixture_path(name)
    rows = launches_json(path)
    actions = report_actions(path)
    assert len(rows) == len(actions)
    compared, measured = 0, 0
    for row, action in zip(rows, actions, strict=True):
        # a launch ncu could not profile has no values
        measured += row["status"] in (None, "", "ok")
        for reason in STALL_REASONS:
            metric = action.metric_by_name(stall_metric(reason.reason))
            value = metric.value() if metric is not None else None
            shown = row[f"stall_{reason.reason}"]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                assert shown is None, (reason.reason, shown)
                continue
            assert shown == pytest.approx(value, rel=1e-12), reason.reason
            compared += 1
    # all reasons but Hopper's gmma on every launch ncu measured
    assert compared >= measured * 18 > 0


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_stalls_are_what_ncu_import_prints(name, real_ncu):
    path = fixture_path(name)
    page = subprocess.run(
        [*real_ncu, "--import", str(path), "--page", "raw", "--csv"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert page.returncode == 0, page.stderr
    table = list(csv.DictReader(io.StringIO(page.stdout)))[1:]  # the row after the header: units
    rows = launches_json(path)
    assert len(table) == len(rows)
    for printed, row in zip(table, rows, strict=True):
        # ncu could not profile it: no values (ncu prints some zeros)
        if row["status"] not in (None, "", "ok"):
            continue
        for reason in STALL_REASONS:
            cell = printed.get(stall_metric(reason.reason), "").replace(",", "")
            if cell in ("", "n/a") or math.isnan(float(cell)):
                continue
            assert row[f"stall_{reason.reason}"] == pytest.approx(
                float(cell), rel=5e-3, abs=6e-3
            ), reason.reason


def test_the_kernel_screen_sorts_the_stalls_and_explains_the_top_one():
    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    for _, row in report.group("launch").iterrows():
        stalls = dict(sections(row)).get("Warp stalls, cycles per issued instruction")
        assert stalls, "every launch of a full-set report has warp state reasons"
        by_title = {r.title: r for r in STALL_REASONS}
        shown = [(label, float(value.split()[0])) for label, value in stalls if label in by_title]
        expected = sorted(
            (
                (r.title, row[f"stall_{r.reason}"])
                for r in STALL_REASONS
                if row[f"stall_{r.reason}"] >= 0.005
            ),
            key=lambda tv: -tv[1],
        )
        assert [t for t, _ in shown] == [t for t, _ in expected]
        assert all(
            v == pytest.approx(e, abs=0.005) for (_, v), (_, e) in zip(shown, expected, strict=True)
        )
        top = next(by_title[t] for t, _ in expected if by_title[t].reason != "selected")
        assert dict(stalls)["Top stall"].startswith(f"{top.title}: {top.meaning}")


def test_a_report_without_warp_state_shows_no_stall_section():
    report = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    row = report.group("name").iloc[0]
    assert "Warp stalls, cycles per issued instruction" not in dict(sections(row))
