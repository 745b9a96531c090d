"""Issue 41.6's smaller untruths, as the app shows them (Pilot, real files)."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.core.store.run_store import Store
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.screens.kernel import KernelScreen

from ..conftest import fixture_path
from ..helpers.app import H100, make_app, ready, screen_lines

# Labels whose values are text from the report, which a report may not hold (a .ncu-rep names no process).
TEXT_LABELS = ("Process", "NVTX", "Grid", "Block")


async def test_the_kernel_screen_shows_no_label_without_a_value():
    """The H100 capture's launches name no process and no NVTX range: no `Process` line with nothing beside it;
    the grid, which ncu recorded, is still shown with its value."""
    app = make_app(read_report(fixture_path(H100)))
    async with app.run_test(size=(120, 160)) as pilot:  # tall: every section on screen at once
        await ready(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, KernelScreen)
        await pilot.pause()
        # the metrics' column (at 120 columns the roofline plot sits beside them, after a `│`)
        lines = [line.split("│")[0].strip() for line in screen_lines(app)]
    assert not [line for line in lines if line in TEXT_LABELS]  # a label alone on its line: an empty value
    grid = next(line for line in lines if line.startswith("Grid"))
    assert grid.removeprefix("Grid").strip().startswith("(")  # `Grid  (1024, 1, 1)`


async def test_the_runs_screen_is_newest_first_as_its_status_says(tmp_path):
    """It reversed the store's id order: an imported run, stored last with its own older capture time, came
    first under "newest first"."""
    store = Store(tmp_path / "runs.db")
    report = read_report(fixture_path(H100))
    for name, day in (("middle", 2), ("oldest", 1), ("newest", 3)):
        store.save(report, name, created=1_760_000_000 + day * 86400.0)
    store.close()
    app = runs_app(tmp_path / "runs.db")
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        model = app.first.model
        assert [model.row(i)["name"] for i in range(len(model))] == ["newest", "middle", "oldest"]
        assert "newest first" in str(app.first.query_one("#status").render())
