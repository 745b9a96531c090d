"""Regenerate the README's screenshots: the real app on the bundled demo report, driven by Textual's
Pilot.

    python docs/screenshots/make_screenshots.py

Writes kernels.svg (the Kernels screen) and roofline.svg (`r` on the first tensor-core GEMM's row:
the Roofline screen with that kernel selected) beside this file, at 80x24, the size the app is
designed to stay legible at. The SVGs are the app's own export (`App.save_screenshot`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.cli.main import bundled_example

HERE = Path(__file__).resolve().parent
SIZE = (80, 24)


async def _until(pilot, done, what: str) -> None:
    """Wait for worker threads (reading, grouping) to finish what `done` checks; fail loudly, never
    shoot early."""
    for _ in range(500):
        if done():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise SystemExit(f"make_screenshots: {what} never happened")


async def main() -> None:
    app = kernels_app(bundled_example())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.kernels
        await _until(
            pilot,
            lambda: screen.model is not None and not screen.query_one(KernelTable).loading,
            "the kernel table filling",
        )
        app.save_screenshot("kernels.svg", str(HERE))
        table = screen.query_one(KernelTable)
        # down to the first row that ran on tensor cores: the GEMM people look for
        for _ in range(len(screen.model)):
            if str(screen.model.row(table.cursor_row)["precision"]).startswith("tensor"):
                break
            await pilot.press("down")
        else:
            raise SystemExit("make_screenshots: the demo has no tensor-core kernel")
        await pilot.press("r")
        await _until(
            pilot, lambda: isinstance(app.screen, RooflineScreen), "the Roofline screen opening"
        )
        app.save_screenshot("roofline.svg", str(HERE))
    for name in ("kernels.svg", "roofline.svg"):
        print(HERE / name)


if __name__ == "__main__":
    asyncio.run(main())
