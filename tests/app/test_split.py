"""Issue 19: the list + details split. From 120 columns the Kernels screen shows the selected row's
metrics beside the table, following the cursor; below 120 the table has the whole width and `enter`
opens them (unchanged)."""

from __future__ import annotations

import re

import pytest
from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.widgets.kernel_details import KernelDetails
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, screen_lines


def top_kernels(report, n: int) -> list[tuple[str, int]]:
    """The n kernels of most total time, with their launch counts, from the launches (not the app's
    grouping)."""
    k = report.kernels
    time = k.groupby("kernel", observed=True)["duration_s"].sum().sort_values(ascending=False)
    count = k.groupby("kernel", observed=True).size()
    return [(name, int(count[name])) for name in time.index[:n]]


def details_lines(app) -> list[str]:
    """The details pane's lines as on screen: the right part of each screen line, right of its left
    border."""
    details = app.screen.query_one(KernelDetails)
    left = details.region.x + 1  # the border's cell
    return [
        line[left:].strip() for line in screen_lines(app)[details.region.y : details.region.bottom]
    ]


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
        # (a line may end in the pane's scrollbar: the details of a full-set row outgrow the pane)
        assert lines[0] == first and any(
            re.match(rf"Launches +{first_n}(\s|$)", line) for line in lines
        )
        await pilot.press("j")
        await pilot.pause(0.1)
        lines = details_lines(app)
        assert lines[0] == second and any(
            re.match(rf"Launches +{second_n}(\s|$)", line) for line in lines
        )
        # the full Kernel screen (its roofline too) is still one key away
        await pilot.press("enter")
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


async def details_text(app, pilot) -> str:
    """Every line of the details pane, scrolled through, as one line of words (values wrap in the
    pane)."""
    details = app.screen.query_one(KernelDetails)
    details.scroll_home(animate=False)
    await pilot.pause()
    text = []
    while True:
        text += details_lines(app)
        if details.scroll_y >= details.max_scroll_y:
            break
        details.scroll_to(y=details.scroll_y + details.region.height, animate=False)
        await pilot.pause()
    return " ".join(" ".join(text).split())


async def test_the_split_gives_the_kernel_screens_command_for_an_unprofiled_launch():
    """The last of 45 launches of one kernel was not profiled: the details beside the table name the
    window that profiles only it (`--launch-skip` past the 44 before it, counted here with
    ncu_report), as the Kernel screen does, not the first launch of the kernel again."""
    ncu_report = pytest.importorskip("ncu_report")
    path = fixture_path("rtx5060ti_transpose_45k_basic.ncu-rep")
    context = ncu_report.load_report(str(path))
    names = [
        context.range_by_idx(i).action_by_idx(j).name()
        for i in range(context.num_ranges())
        for j in range(context.range_by_idx(i).num_actions())
    ]
    unprofiled = len(names) - 1
    before = names[:unprofiled].count(names[unprofiled])
    assert before == 44
    command = f"ncu -k {names[unprofiled]} --launch-skip {before} -c 1"
    app = make_app(read_report(path), by="launch")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        shown = screen.model.shown()
        await pilot.press(*["j"] * int((shown["launch_id"] == unprofiled).to_numpy().argmax()))
        await pilot.pause(0.1)
        assert screen.current_row()["launch_id"] == unprofiled
        beside = await details_text(app, pilot)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        body = app.screen.query_one("#kernel-body")
        full = []
        while True:
            full += screen_lines(app)
            if body.scroll_y >= body.max_scroll_y:
                break
            await pilot.press("pagedown")
        opened = " ".join(" ".join(line.strip() for line in full).split())
    assert command in opened
    # The pane is narrow: it folds a long name inside a word, so compared without the spaces.
    assert command.replace(" ", "") in beside.replace(" ", "")


KEY_COLUMNS = ["Time", "%Time", "FLOP/s", "%Roof", "Bound"]  # what a GPU engineer reads a kernel by


@pytest.mark.parametrize("size", [(120, 40), (160, 50)])
@pytest.mark.parametrize("report", ["demo", H100])
async def test_beside_the_details_the_table_keeps_its_key_columns(size, report, monkeypatch):
    """From 120 columns the details are beside the table, and the table still shows Time, %Time,
    FLOP/s, %Roof and Bound: its header line has them, and the status line's `hidden:` names none of
    them."""
    from pathlib import Path

    from flopscope.tui.cli.main import bundled_example

    path = Path(bundled_example()) if report == "demo" else fixture_path(report)
    app = make_app(read_report(path))
    async with app.run_test(size=size) as pilot:
        screen = await ready(app, pilot)
        await pilot.pause(0.1)
        details = screen.query_one(KernelDetails)
        table = screen.query_one(KernelTable)
        assert details.display and details.region.width >= 40  # room for its labels and values
        assert table.region.right <= details.region.x
        header = screen_lines(app)[table.region.y][: table.region.right].split()
        status = " ".join(screen_lines(app)[-2].split())
        for title in KEY_COLUMNS:
            assert title in header, (title, header)
        hidden = status.split("hidden:", 1)[1] if "hidden:" in status else ""
        assert not set(KEY_COLUMNS) & {
            h.strip(" ,") for h in hidden.replace("(←/→)", "").split(",")
        }, status
