"""A small report the read ahead has finished before the app is up (a cached one, on `open FILE` and
`demo`) is grouped on the UI thread and shown in the app's first frame (FlopscopeApp.
_show_read_ahead): that screen is the one the worker's path draws, line for line, on every real
report, wide (the details beside the table) and at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.read_ahead import ReadAhead
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import FIXTURES
from ..helpers.app import ready, screen_lines

DEMO = next((Path(__file__).parents[2] / "tui" / "examples").glob("*.ncu-rep*"))
REPORTS = [DEMO, *sorted(p for p in FIXTURES.glob("*") if p.name != "SOURCES.md")]


async def _worker_screen(path: Path, size: tuple[int, int]) -> list[str]:
    """The first screen as the app draws it reading `path` in its worker, under the loading
    cover."""
    app = kernels_app(path)
    async with app.run_test(size=size) as pilot:
        assert app.kernels.model is None  # still reading: the loading cover first
        await ready(app, pilot)
        return screen_lines(app)


async def _read_ahead_screen(path: Path, size: tuple[int, int]) -> list[str]:
    """The first screen when the read ahead ended before the app was up."""
    ahead = ReadAhead(lambda progress: read_report(path, progress=progress))
    ahead.result()
    app = kernels_app(path, read_ahead=ahead)
    try:
        async with app.run_test(size=size) as pilot:
            # shown as the app mounted: no loading cover was ever drawn over the table
            assert app.kernels.model is not None
            assert not app.kernels.query_one(KernelTable).loading
            await ready(app, pilot)
            return screen_lines(app)
    finally:
        ahead.stop()


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
async def test_the_first_frame_of_a_report_read_ahead_is_the_workers_screen(path):
    if not path.exists():
        pytest.skip(f"shared ncu fixtures not found at {FIXTURES}")
    assert await _read_ahead_screen(path, (120, 40)) == await _worker_screen(path, (120, 40))


async def test_the_first_frame_at_80x24_is_the_workers_screen():
    assert await _read_ahead_screen(DEMO, (80, 24)) == await _worker_screen(DEMO, (80, 24))


async def test_a_big_report_read_ahead_is_still_grouped_under_the_loading_cover(monkeypatch):
    """Past FIRST_FRAME_LAUNCHES the grouping would hold the screen still: the worker does it."""
    monkeypatch.setattr("flopscope.tui.app.app.FIRST_FRAME_LAUNCHES", 10)  # the demo has 91
    ahead = ReadAhead(lambda progress: read_report(DEMO, progress=progress))
    ahead.result()
    app = kernels_app(DEMO, read_ahead=ahead)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.kernels.model is None
            await ready(app, pilot)
    finally:
        ahead.stop()
