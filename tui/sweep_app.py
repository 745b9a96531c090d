"""The terminal app on a sweep: `flopscope open SWEEP` and `flopscope sweep` (without --no-tui).

The first screen is the Sweep screen; `enter` there opens one point's Kernels screen, which is the app's own
KernelsScreen fed that point's report. Points come from the store (`load_sweep`) or from the CLI's analysis.
"""

from __future__ import annotations

import sys
from pathlib import Path

from flopscope.core import FlopscopeError, Report
from flopscope.core.store import Store
from textual.events import Mount

from .app import FlopscopeApp
from .screens.sweep import SweepScreen


class SweepApp(FlopscopeApp):
    """FlopscopeApp whose first screen is a SweepScreen; `app.report` is the point whose kernels are shown."""

    def __init__(self, param: str, points: list[tuple[float, Report]], title: str, tolerance: float = 0.05) -> None:
        super().__init__(Path(title), report=points[0][1])
        self.sweep = SweepScreen(param, points, title, tolerance)

    async def on_mount(self, event: Mount) -> None:
        event.prevent_default()  # FlopscopeApp.on_mount would push and fill a Kernels screen first
        await self.push_screen(self.sweep)


def load_sweep(name: str, store: Store | None = None) -> tuple[str, list[tuple[float, Report]]] | None:
    """(parameter, points) from the stored runs of sweep `name`, in the order stored; None if there is none.

    The parameter is the first key of the stored params (as `flopscope sweep` analyses it); its values must
    be numbers. Raises FlopscopeError when they are not, or when a run lacks the parameter.
    """
    own = store is None
    store = store or Store()
    try:
        runs = store.runs(sweep=name)
        if runs.empty:
            return None
        first = next((p for p in runs["params"] if p), None)
        if first is None:
            raise FlopscopeError(f"sweep {name}", "its runs have no parameter values",
                                 "`flopscope runs --sweep NAME` lists what was stored")
        param = next(iter(first))
        points = [(_number(name, param, p), store.load(int(rid)))
                  for rid, p in zip(runs["id"], runs["params"], strict=True)]
    finally:
        if own:
            store.close()
    return param, points


def _number(sweep: str, param: str, params: dict) -> float:
    if param not in params:
        raise FlopscopeError(f"sweep {sweep}", f"a run has no {param} value ({params})",
                             "`flopscope runs --sweep NAME` lists what was stored")
    try:
        return float(params[param])
    except (TypeError, ValueError):
        raise FlopscopeError(f"sweep {sweep}", f"{param} = {params[param]!r} is not a number",
                             "a sweep parameter must be a number to be analysed") from None


def run_sweep_app(param: str, points: list[tuple[float, Report]], title: str, tolerance: float = 0.05) -> int:
    """Run the app on a sweep's points; returns the process exit code (2 when there is nothing to show).
    `tolerance` is `flopscope sweep --tolerance` (allowed per-sample FLOP drift)."""
    if not points:
        print(f"flopscope: sweep {title}: no points to show", file=sys.stderr)
        return 2
    app = SweepApp(param, points, title, tolerance)
    app.run(mouse=False)
    return app.return_code or 0
