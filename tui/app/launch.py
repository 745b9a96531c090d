"""How each command opens the app: which screen comes first, and what it is given. A builder per way
in (`kernels_app`, `runs_app`, `sweep_app`; a single screen is `FlopscopeApp(screen)`), and a
`run_*` per CLI caller that adds the user's keymap and runs it, returning the process exit code."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from textual.screen import Screen

from ...core import Report
from ..presentation.text_report import say
from .app import FlopscopeApp, run_app
from .column_choice import load_columns
from .filter_history import FilterHistory, history_path
from .keymap import load_keymap
from .read_ahead import ReadAhead
from .screens.kernels import KernelsScreen

if TYPE_CHECKING:
    from ...core.analysis import ModelFlops, Slice
    from .screens.live_sweep import LiveSweepScreen
    from .screens.profile import ProfileScreen

Keymap = Mapping[str, str] | None


def kernels_app(
    path: str | Path,
    *,
    gpu: str | None = None,
    report: Report | None = None,
    by: str = "name",
    live: ProfileScreen | None = None,
    keymap: Keymap = None,
    roof: str = "clock",
    read_ahead: ReadAhead | None = None,
    columns: Mapping[str, list[str]] | None = None,
    history: FilterHistory | None = None,
    flop_model: ModelFlops | None = None,
) -> FlopscopeApp:
    """The Kernels screen of a report file, grouped `by` (or of a report already read, or of a live
    profile's, shown over it until ncu is done); a file read here (or by `read_ahead`) is judged
    against `roof` (`open --roof`). `columns`: the tables' chosen columns
    (column_choice.load_columns); `history`: the filters given before (filter_history.py), where
    they are kept; `flop_model`: a model's analytic FLOPs, with which the module tree opens over
    the Kernels screen once the report is shown (`open --model`)."""
    return FlopscopeApp(
        KernelsScreen(by),
        path=path,
        gpu=gpu,
        report=report,
        live=live,
        keymap=keymap,
        roof=roof,
        read_ahead=read_ahead,
        columns=columns,
        history=history,
        flop_model=flop_model,
    )


def runs_app(
    store_path: Path,
    sweep: str | None = None,
    *,
    keymap: Keymap = None,
    history: FilterHistory | None = None,
) -> FlopscopeApp:
    """The run store's Runs screen (of one sweep's runs); opening a run points `app.report` at
    it."""
    # here, not at the top: `open FILE` never loads the runs/sweep screens
    from .screens.runs import RunsScreen

    return FlopscopeApp(RunsScreen(store_path, sweep), path="runs", keymap=keymap, history=history)


def sweep_app(
    lines: list[Slice],
    title: str,
    tolerance: float = 0.05,
    judged: str | None = None,
    *,
    keymap: Keymap = None,
    history: FilterHistory | None = None,
) -> FlopscopeApp:
    """The Sweep screen on a sweep's lines (at least one point). `tolerance` is `flopscope sweep
    --tolerance` (allowed drift of FLOP/param); `judged`: the --gpu whose ceilings judge the points,
    named in the header."""
    from .screens.sweep import SweepScreen

    first = SweepScreen(lines, title, tolerance, judged=judged)
    return FlopscopeApp(
        first, path=title, report=lines[0].points[0][1], keymap=keymap, history=history
    )


def run_kernels(
    path: str | Path,
    gpu: str | None = None,
    report: Report | None = None,
    live: ProfileScreen | None = None,
    roof: str = "clock",
    read_ahead: ReadAhead | None = None,
    flop_model: ModelFlops | None = None,
) -> int:
    """`flopscope open FILE`, `open RUN`, `demo` and `profile`; 2 when the report cannot be read or
    the profile failed. `read_ahead`: `path` already being read (see read_ahead.py), stopped if the
    app closes first; `flop_model`: `--model`'s, the module tree opened over the Kernels screen."""
    app = kernels_app(
        path,
        gpu=gpu,
        report=report,
        live=live,
        keymap=load_keymap(),
        roof=roof,
        read_ahead=read_ahead,
        columns=load_columns(),
        history=FilterHistory(history_path()),
        flop_model=flop_model,
    )
    try:
        return run_app(app)
    finally:
        if read_ahead is not None:
            read_ahead.stop()


def run_runs(store_path: Path, sweep: str | None = None) -> int:
    """`flopscope runs`."""
    app = runs_app(store_path, sweep, keymap=load_keymap(), history=FilterHistory(history_path()))
    app.columns = load_columns()  # its own, and the Kernels screen's of a run opened from it
    return run_app(app)


def run_sweep(
    lines: list[Slice], title: str, tolerance: float = 0.05, judged: str | None = None
) -> int:
    """`flopscope open SWEEP` and `flopscope sweep`; 2 when there is nothing to show."""
    if not lines or not lines[0].points:
        say(f"flopscope: sweep {title}: no points to show")
        return 2
    app = sweep_app(
        lines, title, tolerance, judged, keymap=load_keymap(), history=FilterHistory(history_path())
    )
    app.columns = load_columns()  # for the Kernels screen of a point opened from it
    return run_app(app)


def live_sweep_app(
    live: LiveSweepScreen, *, keymap: Keymap = None, history: FilterHistory | None = None
) -> FlopscopeApp:
    """A sweep being profiled: its points' states, then the Sweep screen on what was stored."""
    return FlopscopeApp(live, path=live.title_text, keymap=keymap, history=history)


def run_live_sweep(live: LiveSweepScreen) -> int:
    """`flopscope sweep` profiling in a terminal; 130 when stopped, 2 when nothing was stored."""
    return run_app(
        live_sweep_app(live, keymap=load_keymap(), history=FilterHistory(history_path()))
    )


def run_screen(screen: Screen) -> int:
    """`flopscope diff` and `model --reconcile`: one screen, its exports carrying no report's
    meta."""
    app = FlopscopeApp(
        screen, keymap=load_keymap(), columns=load_columns(), history=FilterHistory(history_path())
    )
    return run_app(app)
