"""Issue 19: the list + details split. From 120 columns the Kernels screen shows the selected row's metrics beside
the table, following the cursor; below 120 the table has the whole width and `enter` opens them (unchanged)."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.widgets.kernel_details import KernelDetails
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, screen_lines


def top_kernels(report, n: int) -> list[tuple[str, int]]:
    """The n kernels of most total time, with their launch counts, from the launches (not the app's grouping)."""
    k = report.kernels
    time = k.groupby("kernel", observed=True)["duration_s"].sum().sort_values(ascending=False)
    count = k.groupby("kernel", observed=True).size()
    return [(name, int(count[name])) for name in time.index[:n]]


def details_lines(app) -> list[str]:
    """The details pane's lines as on screen: the right part of each screen line, right of its left border."""
    details = app.screen.query_one(KernelDetails)
    left = details.region.x + 1  # the border's cell
    return [line[left:].strip() for line in screen_lines(app)[details.region.y : details.region.bottom]]


async def test_the_details_beside_the_table_follow_the_cursor_from_120_columns():
    report = read_report(fixture_path(H100))
    (first, first_n), (second, second_n) = top_kernels(report, 2)
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.pause(0.1)
        details = app.screen.query_one(KernelDetails)
        assert details.display and details.region.width > 0
        table = app.screen.query_one(KernelTable)
        assert table.region.right <= details.region.x  # beside, not over
        lines = details_lines(app)
        assert lines[0] == first and f"Launches              {first_n}" in lines
        await pilot.press("j")
        await pilot.pause(0.1)
        lines = details_lines(app)
        assert lines[0] == second and f"Launches              {second_n}" in lines
        await pilot.press("enter")  # the full Kernel screen (its roofline too) is still one key away
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        assert app.screen.title_text == second


async def test_below_120_columns_the_table_has_the_whole_width():
    report = read_report(fixture_path(H100))
    app = make_app(report)
    async with app.run_test(size=(119, 40)) as pilot:
        await ready(app, pilot)
        await pilot.pause(0.1)
        assert not app.screen.query_one(KernelDetails).display
        assert app.screen.query_one(KernelTable).region.width == 119
        await pilot.resize_terminal(140, 40)  # widened: the split appears, showing the cursor's row
        await pilot.pause(0.2)
        assert app.screen.query_one(KernelDetails).display
        assert details_lines(app)[0] == top_kernels(report, 1)[0][0]
