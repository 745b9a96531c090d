"""Issue 19: a breadcrumb of where one is, on the Kernels and Kernel screens (`demo › by name ›
nvjet…`), within 80x24's header budget (the Kernels header, breadcrumb included, takes at most 5
lines: issue 19.9)."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.widgets.breadcrumb import Breadcrumb
from flopscope.tui.app.widgets.summary import Summary
from flopscope.tui.cli.main import bundled_example

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, regrouped, screen_lines

SEP = " › "


async def test_the_kernels_and_kernel_screens_say_where_one_is():
    report = read_report(fixture_path(H100))
    # the first row by time
    top = report.kernels.groupby("kernel", observed=True)["duration_s"].sum().idxmax()
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert screen_lines(app)[0].strip() == f"{H100}{SEP}by name"
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        await pilot.pause(0.05)
        assert screen_lines(app)[0].strip() == f"{H100}{SEP}by name{SEP}{top}"
        await pilot.press("escape", "g")
        await regrouped(app, pilot, "launch")
        await pilot.pause(0.05)
        assert screen_lines(app)[0].strip().endswith(f"{SEP}by launch")


async def test_at_80x24_the_header_with_its_breadcrumb_takes_5_lines_and_the_name_keeps_its_room():
    report = read_report(bundled_example())
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        crumb, summary = screen.query_one(Breadcrumb), screen.query_one(Summary)
        assert crumb.region.height == 1 and crumb.region.height + summary.region.height <= 5
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        await pilot.pause(0.05)
        # The demo's first kernel has a 150-cell name: the report and grouping give way to `…`
        # first, then the name is cut at its end, within the 78 cells the line has.
        name = app.screen.title_text
        assert len(name) > 78
        assert screen_lines(app)[0].strip() == f"…{SEP}…{SEP}{name[: 78 - 2 * (1 + len(SEP)) - 1]}…"
