"""Driving the Textual app under Pilot: make_app, ready (the table filled), the screen as text
lines."""

from __future__ import annotations

import io

from flopscope.core import Report
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.column_choice import load_columns
from flopscope.tui.app.filter_history import FilterHistory, history_path
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.kernels import KernelsScreen, PushedKernelsScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from rich.console import Console

from ..conftest import settle

H100 = "h100pcie_ee384_cub_agents_full.ncu-rep"  # 18 launches, 7 names, both bounds, real ceilings


def make_app(report: Report, by: str = "name") -> FlopscopeApp:
    return kernels_app(report.meta.source, report=report, by=by)


def opened_app(report: Report) -> FlopscopeApp:
    """The Kernels app as `flopscope open` starts it (launch.run_kernels): the chosen columns and
    the filters given before, read from flopscope's home. The keymap aside: tests press the default
    keys."""
    history = FilterHistory(history_path())
    return kernels_app(report.meta.source, report=report, columns=load_columns(), history=history)


async def exited(app: FlopscopeApp, pilot, tries: int = 200) -> int | None:
    """The app's exit code once it has ended by itself (a report it could not read: 2), or None
    after `tries`."""
    for _ in range(tries):
        if app.return_code is not None:
            break
        await pilot.pause(0.05)
    return app.return_code


async def ready(app: FlopscopeApp, pilot) -> KernelsScreen:
    """Wait until the kernels table has rows from a finished grouping worker."""
    screen = app.kernels
    for _ in range(250):
        if screen.model is not None and not screen.query_one(KernelTable).loading:
            await pilot.pause()
            return screen
        await pilot.pause(0.02)
    raise AssertionError("the kernel table never filled")


async def pushed_kernels(app: FlopscopeApp, pilot, tries: int = 250) -> PushedKernelsScreen:
    """Wait until a Kernels screen pushed over another (a stored run's, a sweep point's, a
    reconciled layer's) shows its rows; return it."""
    await settle(
        pilot,
        lambda: (
            isinstance(app.screen, PushedKernelsScreen)
            and app.screen.model is not None
            and not app.screen.query_one(KernelTable).loading
        ),
        tries,
    )
    return app.screen


async def regrouped(app: FlopscopeApp, pilot, by: str) -> None:
    for _ in range(250):
        if app.kernels.by == by and not app.kernels.query_one(KernelTable).loading:
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never grouped by {by}")


def screen_lines(app: FlopscopeApp) -> list[str]:
    """The screen as plain text lines, rendered the way `App.export_screenshot` renders its SVG."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text().splitlines()


async def focus_column(pilot, table: KernelTable, name: str) -> None:
    await pilot.press("home")
    for _ in range(len(table.layout_columns)):
        if table.focused_column.name == name:
            return
        await pilot.press("right")
    raise AssertionError(f"column {name} not on screen")


# -- the summary header
# -----------------------------------------------------------------------------------------
def summary_text(app: FlopscopeApp) -> str:
    from flopscope.tui.app.widgets.summary import Summary

    summary = app.screen.query_one(Summary)
    return summary.text(summary.content_size.width).plain


def shown_cells(table: KernelTable) -> list[dict[str, str]]:
    """The rows on screen, cut into cells at the table's column edges, by column name."""
    out = []
    for line in table.visible_text()[1:]:
        cells, at = {}, 0
        for _, column, width in table.layout_columns:
            cells[column.name] = line[at : at + width].strip()
            at += width + 1
        if any(cells.values()):
            out.append(cells)
    return out


async def wait_for_rows(pilot, screen) -> KernelTable:
    table = screen.query_one(KernelTable)
    await settle(pilot, lambda: table.layout_columns and table.model is not None)
    return table


async def statuses_until_table(app: FlopscopeApp, pilot, marker: str) -> list[str]:
    """The Kernels status line's texts holding `marker` (a read's progress), polled until the table
    is there."""
    status = app.kernels.query_one("#status")
    seen: list[str] = []

    def table_shown() -> bool:
        text = str(status.render())
        if marker in text:
            seen.append(text)
        return app.kernels.model is not None

    await settle(pilot, table_shown, tries=3000)
    return seen


def shows_path(line: str, path: object) -> bool:
    """Whether a message's `line` shows `path` as the app's messages do: whole, or cut in its middle
    to the line's width (shorter than the path), its start and its file name kept."""
    text = str(path)
    head, cut, tail = line.partition("…")
    return line == text or (
        bool(cut) and len(line) < len(text) and text.startswith(head) and text.endswith(tail)
    )
