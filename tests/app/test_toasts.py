"""Issue 19.9: at 80x24 a message (Textual toast) sits over the status and key lines, never over the
kernel table's rows: the rows one is reading stay readable while `Exported N rows to PATH` shows."""

from __future__ import annotations

import pytest
from flopscope.core import read_report
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, screen_lines


def toasts(app) -> list:
    return list(app.screen.query("Toast"))  # Textual's notification widget, by its CSS type name


def table_rows_unchanged(app, table, before: list[str]) -> None:
    top, bottom = table.region.y, table.region.bottom
    assert screen_lines(app)[top:bottom] == before[top:bottom]
    for toast in toasts(app):
        assert toast.region.y >= bottom, (toast.region, table.region)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize(
    "folder",
    ["", "a-folder-whose-name-is-longer-than-a-line-of-the-screen-" * 3, "esc\x1b[2J" * 9],
    # escapes: wider once shown escaped than the bytes they stand for
    ids=["short", "long", "escapes"],
)
async def test_the_export_message_leaves_the_table_rows_visible(tmp_path, size, folder):
    """However long the path, the message is two lines: a path longer than a line (a deep folder, or
    pytest's own under xdist, which once made it three) is cut in its middle, its file name kept."""
    report = read_report(fixture_path(H100))
    app = make_app(report)
    (tmp_path / folder).mkdir(exist_ok=True)
    out = tmp_path / folder / "rows.csv"
    async with app.run_test(size=size, notifications=True) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        before = screen_lines(app)
        await pilot.press("e")
        app.screen.query_one("Input").value = str(out)
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is screen and toasts(app))
        await pilot.pause(0.3)  # the toast's layout settles
        lines = screen_lines(app)
        # the message is there, readable
        (at,) = [k for k, line in enumerate(lines) if "Exported" in line]
        # one sentence (issue 41.6: the toast read `Exported: Wrote 26 row(s)`)
        assert (
            f"Exported {len(report.group('name'))} rows to" in lines[at]
            and "Wrote" not in lines[at]
        )
        assert lines[at + 1].rstrip().endswith("rows.csv") and out.is_file()
        assert all(toast.region.height <= 2 for toast in toasts(app))
        table_rows_unchanged(app, table, before)


async def test_a_runs_screen_hint_leaves_the_runs_visible(tmp_path):
    from flopscope.core.store.run_store import Store

    store = Store(tmp_path / "runs.db")
    store.save(read_report(fixture_path(H100)), "h100")
    store.close()
    app = runs_app(tmp_path / "runs.db")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        before = screen_lines(app)
        await pilot.press("d")  # no run A marked: a hint says how to compare
        await settle(pilot, lambda: toasts(app))
        await pilot.pause(0.3)
        assert any("mark run A with m" in line for line in screen_lines(app))
        table_rows_unchanged(app, table, before)
