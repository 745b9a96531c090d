"""ncu's details page labels two clocks "SM Frequency": the Speed Of Light header's (the GPC
clock, gpc__cycles_elapsed.avg.per_second) and, with `--print-details all`, the roofline chart's
body's (the SM clock, sm__/smsp__cycles_elapsed.avg.per_second). A page with both is read, not
refused as a conflict, and each launch's SM clock is the chart's; a page with the header alone keeps
the header's. Expected clocks come from the real ncu's raw page of the same report, read with
csv."""

from __future__ import annotations

import csv
import functools
import io
import subprocess

import pytest
from flopscope.core import read_report
from flopscope.core.readers import csv_details

from ..conftest import FIXTURES

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep"))


def _page(real_ncu, report, *args: str) -> str:
    """ncu's page of `report`, printed once per test session (both readers' tests read it)."""
    return _printed(tuple(real_ncu), str(report), args)


@functools.cache
def _printed(real_ncu: tuple[str, ...], report: str, args: tuple[str, ...]) -> str:
    done = subprocess.run(
        [*real_ncu, "--import", report, "--csv", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _raw_clocks(real_ncu, report) -> dict[str, dict[str, float]]:
    """Per launch ID, the clocks in Hz from ncu's raw page (base units: cycle/second)."""
    rows = list(
        csv.reader(io.StringIO(_page(real_ncu, report, "--page", "raw", "--print-units", "base")))
    )
    header = rows[0]
    names = ("smsp__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second")
    at = {n: header.index(n) for n in names}
    return {r[0]: {n: float(r[at[n]].replace(",", "")) for n in names} for r in rows[2:] if r}


@pytest.mark.parametrize("rows_only", [False, True], ids=["arrow", "row-by-row"])
@pytest.mark.parametrize("name", FULL)
def test_each_launch_takes_the_charts_sm_clock_or_else_the_headers(
    name, rows_only, real_ncu, tmp_path, monkeypatch
):
    report = FIXTURES / name
    if rows_only:  # the reader for pages Arrow cannot read
        monkeypatch.setattr(csv_details, "_read_arrow", lambda doc, progress=None: None)
    clocks = _raw_clocks(real_ncu, report)
    for page, metric in (
        (["--print-details", "all"], "smsp__cycles_elapsed.avg.per_second"),
        ([], "gpc__cycles_elapsed.avg.per_second"),
    ):
        path = tmp_path / f"details{len(page)}.csv"
        path.write_text(_page(real_ncu, report, "--page", "details", *page), encoding="utf-8")
        kernels = read_report(path).kernels
        assert len(kernels) == len(clocks)
        for launch, clock in zip(kernels["launch_id"], kernels["sm_clock_hz"], strict=True):
            expected = clocks[str(launch)][metric]
            # the page prints 3 to 5 significant digits (1.03 cycle/nsecond, 584.84 cycle/usecond)
            assert clock == pytest.approx(expected, rel=5e-3, nan_ok=True), (name, page, launch)


def test_some_report_has_clocks_far_enough_apart_to_tell_which_was_taken(real_ncu):
    """The test above tells the two clocks apart only where they differ by more than its tolerance:
    the T4's do (554 and 585 MHz)."""
    apart = [
        name
        for name in FULL
        for clocks in _raw_clocks(real_ncu, FIXTURES / name).values()
        if abs(
            clocks["smsp__cycles_elapsed.avg.per_second"]
            / clocks["gpc__cycles_elapsed.avg.per_second"]
            - 1
        )
        > 0.02
    ]
    assert apart
