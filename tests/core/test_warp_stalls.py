"""Issue 42.2: why warps stall. Every full-set report carries ncu's warp state reasons per launch;
they are columns of the canonical table (`stall_<reason>`, cycles per issued instruction), read here
against NVIDIA's own readings of the same file: its ncu_report module and `ncu --import FILE --page
raw --csv`, never flopscope's reader."""

from __future__ import annotations

import csv
import io
import math
import re
import subprocess

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.stalls import (
    BY_REASON,
    SAMPLE_COLUMNS,
    SAMPLED_REASONS,
    STALL_REASONS,
    stall_metric,
)
from flopscope.tui.presentation.kernel_sections import sections
from flopscope.tui.presentation.stall_samples import SAMPLED_TITLE

from ..conftest import FIXTURES, fixture_path
from ..helpers.accounting import report_actions
from ..helpers.cli import launches_json
from ..helpers.ncu_pages import ncu_csv
from ..helpers.ncu_samples import launch_samples

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
    # the row after the header: units
    table = list(csv.DictReader(io.StringIO(ncu_csv(real_ncu, path))))[1:]
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


SAMPLED = "rtx4090_torch_linear_sgemm.ncu-rep"  # SourceCounters without WarpStateStats


def _sampled_panel(row) -> tuple[int, dict[str, int], dict[str, float]]:
    """(all samples, {reason title: samples}, {title: % share}) as the fallback panel shows them."""
    panel = dict(sections(row))[SAMPLED_TITLE]
    total = int(dict(panel)["Samples"].split()[0].replace(",", ""))
    titles = {r.title for r in SAMPLED_REASONS}
    counts = {t: int(v.split()[0].replace(",", "")) for t, v in panel if t in titles}
    shares = {t: float(v.split()[1].rstrip("%")) for t, v in panel if t in titles}
    return total, counts, shares


def _check_against_ncu(row, launch: int, path, real_ncu) -> None:
    total, counts, shares = _sampled_panel(row)
    all_samples, by_reason = launch_samples(real_ncu, path, launch)
    assert total == all_samples, launch
    printed = {BY_REASON[r].title: n for r, n in by_reason.items()}
    assert {t: counts.get(t, 0) for t in printed} == printed, launch
    # a reason ncu's page has no column for (Volta's branch resolving, Hopper's warpgroup arrive)
    # is in its All column: the rest of it
    unprinted = sum(n for t, n in counts.items() if t not in printed)
    assert unprinted == all_samples - sum(printed.values()), launch
    for title, n in counts.items():
        assert shares[title] == pytest.approx(100 * n / all_samples, abs=0.0501), (launch, title)
    order = [n for t, n in sorted(counts.items(), key=lambda tn: -tn[1])]
    assert [counts[t] for t in counts] == order, "most samples first"


def test_a_report_with_samples_but_no_warp_state_shows_the_sampled_shares(real_ncu):
    """The RTX 4090 report was captured with SourceCounters and no WarpStateStats: its stall panel
    is PC sampling's, every launch's counts and shares those of ncu's own source page."""
    path = fixture_path(SAMPLED)
    report = read_report(path)
    launches = report.group("launch").set_index("launch_id", drop=False)
    assert launches.filter(like="stall_").isna().all(axis=None)  # no warp state reasons
    for launch in range(len(report.kernels)):
        row = launches.loc[launch]
        titles = [t for t, _ in sections(row)]
        assert (
            SAMPLED_TITLE in titles and "Warp stalls, cycles per issued instruction" not in titles
        )
        _check_against_ncu(row, launch, path, real_ncu)


@pytest.mark.parametrize("name", FULL)
def test_without_its_warp_state_columns_a_full_report_falls_back_to_samples(name, real_ncu):
    """Every full-set report, its warp state columns dropped: each launch with samples shows them
    as ncu's source page counts them; a launch without any shows no stall panel."""
    path = fixture_path(name)
    launches = read_report(path).group("launch").set_index("launch_id", drop=False)
    launches = launches.drop(columns=[c for c in launches.columns if c.startswith("stall_")])
    shown = 0
    for launch, row in launches.iterrows():
        if row["status"] not in (None, "", "ok") or not any(
            row.get(c, 0) > 0 for c in SAMPLE_COLUMNS
        ):
            assert SAMPLED_TITLE not in dict(sections(row)), launch
            continue
        _check_against_ncu(row, int(launch), path, real_ncu)
        shown += 1
    assert shown >= 1


# The sections whose bodies hold the stalls and the samples, with the launch's duration (the whole
# page with every body reads too: test_details_clock.py).
SECTIONS = [f"--section={s}" for s in ("SpeedOfLight", "WarpStateStats", "SourceCounters")]


def _ncu_details(real_ncu, path, names: str) -> list[list[str]]:
    page = subprocess.run(
        [*real_ncu, "--import", str(path), "--page", "details", "--csv", "--print-details", "all",
         "--print-metric-name", names, *SECTIONS],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert page.returncode == 0, page.stderr
    return list(csv.reader(io.StringIO(page.stdout)))


@pytest.mark.parametrize("name", FULL)
def test_a_details_csv_with_its_sections_bodies_has_the_warp_state_reasons(
    name, real_ncu, tmp_path
):
    """ncu's details page with the sections' bodies (`--print-details all`) lists each launch's
    stall reasons under Warp State Statistics by label (`Stall Long Scoreboard`), and PC sampling's
    sums under Source Counters (membar's in `byte`, in ncu 2024.1): flopscope reads both, as ncu
    prints them. Which metric a label is comes from ncu too: the same page with metric names."""
    path = fixture_path(name)
    labelled = _ncu_details(real_ncu, path, "label")
    named = _ncu_details(real_ncu, path, "name")
    assert len(labelled) == len(named)
    header = labelled[0]
    at = {h: header.index(h) for h in ("ID", "Section Name", "Metric Name", "Metric Value")}
    expected: dict[tuple[int, str], float] = {}
    for row, same in zip(labelled[1:], named[1:], strict=True):
        if len(row) <= at["Metric Value"] or row[at["Section Name"]] != "Warp State Statistics":
            continue
        metric = same[at["Metric Name"]]
        match = re.match(
            r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$", metric
        )
        if match and row[at["Metric Name"]] != metric:  # a label's row
            value = float(row[at["Metric Value"]].replace(",", ""))
            expected[(int(row[at["ID"]]), match.group(1))] = value
    assert expected
    csv_path = tmp_path / f"{name}.details.csv"
    csv_path.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in labelled) + "\n")
    rows = launches_json(csv_path)
    raw = launches_json(path)
    for (launch, reason), value in expected.items():
        if math.isnan(value):  # a launch ncu could not profile
            assert rows[launch][f"stall_{reason}"] is None, (launch, reason)
            continue
        assert rows[launch][f"stall_{reason}"] == pytest.approx(value, abs=1e-9), (launch, reason)
        # and it is the report's own value, to the page's two decimals
        assert value == pytest.approx(raw[launch][f"stall_{reason}"], abs=0.0051), (launch, reason)
    for launch, row in enumerate(rows):
        for column in (c for c in row if c.startswith("samples_")):
            assert row[column] == raw[launch][column], (launch, column)
