"""The terminal app on a sweep: `flopscope open SWEEP` and `flopscope sweep` (without --no-tui).

The first screen is the Sweep screen; `enter` there opens one point's Kernels screen, which is the app's own
KernelsScreen fed that point's report. Points come from the store (`core.scaling.load_sweep`) or from the CLI's
analysis.
"""

from __future__ import annotations

from pathlib import Path

from textual.events import Mount

from ...core.scaling import Slice
from ..presentation.text_report import say
from .app import FlopscopeApp
from .screens.sweep import SweepScreen


class SweepApp(FlopscopeApp):
    """FlopscopeApp whose first screen is a SweepScreen; `app.report` is the point whose kernels are shown.

    A sweep over several parameters has several lines to analyse (`core.scaling.slices`); `n` on the Sweep
    screen moves to the next one.
    """

    def __init__(self, lines: list[Slice], title: str, tolerance: float = 0.05, judged: str | None = None) -> None:
        super().__init__(Path(title), report=lines[0].points[0][1])
        self.sweep = SweepScreen(lines, title, tolerance, judged=judged)

    async def on_mount(self, event: Mount) -> None:
        event.prevent_default()  # FlopscopeApp.on_mount would push and fill a Kernels screen first
        await self.push_screen(self.sweep)


def run_sweep_app(lines: list[Slice], title: str, tolerance: float = 0.05, judged: str | None = None) -> int:
    """Run the app on a sweep's lines; returns the process exit code (2 when there is nothing to show).
    `tolerance` is `flopscope sweep --tolerance` (allowed drift of FLOP/param); `judged`: the --gpu whose
    ceilings judge the points, named in the header."""
    if not lines or not lines[0].points:
        say(f"flopscope: sweep {title}: no points to show")
        return 2
    app = SweepApp(lines, title, tolerance, judged)
    app.run(mouse=False)
    return app.return_code or 0
