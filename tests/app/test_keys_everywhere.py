"""Issue 43.4: keys that read alike everywhere: the sort picker moves with j/k and g/G like every
list, and `q` quits from the help and the sort picker as help says it does everywhere (a modal held
the app's `q` back); and the walk: one test through every screen and dialog pressing the shared
keys, against a table of what each must do there (WALK)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from flopscope.core import FlopscopeError
from flopscope.tui.app.screens.columns import ColumnsScreen
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.export import ExportScreen
from flopscope.tui.app.screens.help import HelpScreen, binding_rows
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.kernel_pair import KernelPairScreen
from flopscope.tui.app.screens.live_sweep import LiveSweepScreen
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.app.screens.profile import ProfileScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.reconcile import ReconcileScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.screens.sort import SortScreen
from flopscope.tui.app.screens.source import SourceScreen
from flopscope.tui.app.screens.steps import StepsScreen
from flopscope.tui.app.screens.sweep import SweepScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.command import CommandPalette
from textual.widgets import OptionList

from ..conftest import fixture_path, settle
from ..helpers.app import exited, make_app, ready
from ..helpers.real_files import DEMO, report_of
from ..helpers.sweep_reports import shuffled


async def test_the_sort_picker_moves_with_j_k_g_G():
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("o")
        await settle(pilot, lambda: isinstance(app.screen, SortScreen))
        choices = app.screen.query_one("#choices", OptionList)
        start = choices.highlighted or 0
        await pilot.press("j", "j")
        assert choices.highlighted == start + 2
        await pilot.press("k")
        assert choices.highlighted == start + 1
        await pilot.press("G")
        assert choices.highlighted == choices.option_count - 1
        await pilot.press("g")
        assert choices.highlighted == 0


async def test_q_quits_from_the_help_and_the_sort_picker():
    for opener, dialog in (("question_mark", HelpScreen), ("o", SortScreen)):
        app = make_app(report_of(DEMO))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)
            await pilot.press(opener)
            await settle(pilot, lambda a=app, d=dialog: isinstance(a.screen, d))
            await pilot.press("q")
            assert await exited(app, pilot) is not None or not app.is_running, dialog


# -- the walk (issue 43): every screen and dialog, the shared keys on each, and what each must do
# there --------- What a key does: DOWN/UP move the cursor or the text one step (a row, a line, a
# point); PAGE moves more than one; LAST/FIRST go to the end and the start; BACK leaves the screen
# or closes the dialog; STAYS: a first screen has nowhere to go back to; QUITS ends the app (the
# live screens: stop, exit 130); TYPES: a text field takes it.
DOWN, UP, PAGE, PAGE_BACK, LAST, FIRST = "down", "up", "page", "page back", "last", "first"
BACK, STAYS, QUITS, TYPES = "back", "stays", "quits", "types"
MOVES = [
    ("j", DOWN),
    ("k", UP),
    ("pagedown", PAGE),
    ("pageup", PAGE_BACK),
    ("end", LAST),
    ("home", FIRST),
]
# where `g` is no screen key of its own (Group, Next GPU)
MOVES_G = [*MOVES, ("G", LAST), ("g", FIRST)]
# `?` and `q` are typed in a text field
TEXT = [("j", TYPES), ("k", TYPES), ("q", TYPES), ("escape", BACK)]

# (screen or dialog, key, what it must do there): the table the walk checks, in the order pressed.
WALK: list[tuple[str, str, str]] = [
    *(("kernels", k, e) for k, e in [*MOVES, ("escape", STAYS), ("q", QUITS)]),
    *(("kernel", k, e) for k, e in [*MOVES, ("escape", BACK), ("q", QUITS)]),
    *(("source", k, e) for k, e in [*MOVES_G, ("escape", BACK)]),
    *(("source", k, e) for k, e in [("q", QUITS)]),
    *(("roofline", k, e) for k, e in [*MOVES, ("escape", BACK), ("q", QUITS)]),
    *(("module tree", k, e) for k, e in [*MOVES, ("escape", BACK), ("q", QUITS)]),
    *(("steps", k, e) for k, e in [*MOVES_G, ("escape", BACK), ("q", QUITS)]),
    *(("runs", k, e) for k, e in [*MOVES, ("escape", STAYS), ("q", QUITS)]),
    *(("diff", k, e) for k, e in [*MOVES, ("escape", STAYS), ("q", QUITS)]),
    *(("kernel pair", k, e) for k, e in [*MOVES, ("escape", BACK)]),
    *(("kernel pair", k, e) for k, e in [("q", QUITS)]),
    *(("sweep", k, e) for k, e in [*MOVES, ("escape", STAYS)]),
    *(("sweep", k, e) for k, e in [("q", QUITS)]),
    *(("live sweep", k, e) for k, e in [*MOVES_G, ("escape", STAYS), ("q", QUITS)]),
    *(("profile", k, e) for k, e in [("escape", STAYS), ("q", QUITS)]),
    *(("reconcile", k, e) for k, e in [*MOVES, ("escape", STAYS)]),
    *(("reconcile", k, e) for k, e in [("q", QUITS)]),
    *(("help", k, e) for k, e in [*MOVES_G, ("escape", BACK), ("q", QUITS)]),
    *(("sort picker", k, e) for k, e in [*MOVES_G, ("escape", BACK), ("q", QUITS)]),
    *(("column chooser", k, e) for k, e in [*MOVES_G, ("escape", BACK), ("q", QUITS)]),
    *(("filter prompt", k, e) for k, e in TEXT),
    *(("export dialog", k, e) for k, e in TEXT),
    *(("palette", k, e) for k, e in TEXT),
]


def _blocking_job(done: threading.Event):
    """A live screen's job that runs until the test lets it end (after `q`)."""

    def job(*args, **callbacks):
        done.wait(20)
        raise FlopscopeError("test", "stopped", "none")

    return job


def _walk_app(name: str, tmp_path: Path, reports, done: threading.Event):
    """The app for `name`, and the steps from its start to `name`: (key to press or None, the screen
    class or a test of the app once it is there)."""
    from flopscope.core import read_report
    from flopscope.core.analysis.diff import diff_runs
    from flopscope.core.analysis.scaling import Slice
    from flopscope.core.store.run_store import Store
    from flopscope.tui.app.app import FlopscopeApp
    from flopscope.tui.app.launch import live_sweep_app, runs_app, sweep_app

    demo = report_of(DEMO)
    first = {
        "kernels": ("kernels", None),
        "kernel": ("kernels", ("enter", KernelScreen)),
        "roofline": ("kernels", ("r", RooflineScreen)),
        "help": ("kernels", ("question_mark", HelpScreen)),
        "sort picker": ("kernels", ("o", SortScreen)),
        "column chooser": ("kernels", ("C", ColumnsScreen)),
        "filter prompt": ("kernels", ("slash", PromptScreen)),
        "export dialog": ("kernels", ("e", ExportScreen)),
        "palette": ("kernels", ("colon", CommandPalette)),
        "module tree": ("kernels", None),
        "steps": ("kernels", None),
        "source": ("source", None),
    }.get(name, (name, None))
    steps: list = []
    if first[0] == "kernels":
        app = make_app(_many_steps(tmp_path) if name == "steps" else demo)
        steps.append((None, lambda a: a.kernels.model is not None))
        if name in ("module tree", "steps"):
            steps += [
                ("g", lambda a: a.kernels.by == "launch"),
                ("g", lambda a: a.kernels.by == "nvtx"),
            ]
            steps.append(("g", ModuleTreeScreen))
        if name == "steps":
            steps.append(("t", StepsScreen))
    elif name == "source":
        app = make_app(
            report_of(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")), by="launch"
        )
        steps += [
            (None, lambda a: a.kernels.model is not None),
            ("enter", KernelScreen),
            ("v", SourceScreen),
        ]
    elif name == "runs":
        with Store(tmp_path / "runs.db") as store:
            # more runs than the screen has rows: a page key has somewhere to go
            for n in range(30):
                store.save(demo, f"run{n}")
        app = runs_app(tmp_path / "runs.db")
        steps.append((None, lambda a: getattr(a.screen, "model", None) is not None))
    elif name in ("diff", "kernel pair"):
        h100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
        a, b = (read_report(h100 / f"train_transformer_bf16_bs{n}.ncu-rep.xz") for n in (8, 32))
        app = FlopscopeApp(DiffScreen(diff_runs(a, b), "bs8", "bs32", reports=(a, b)))
        steps.append((None, DiffScreen))
        if name == "kernel pair":
            steps.append(("enter", KernelPairScreen))
    elif name == "sweep":
        app = sweep_app([Slice("batch_size", {}, shuffled(reports))], "sweep")
        steps.append((None, SweepScreen))
    elif name == "live sweep":
        points = [{"bs": str(2**n)} for n in range(40)]  # more points than the screen has rows
        app = live_sweep_app(LiveSweepScreen(_blocking_job(done), points, "s"))
        steps.append((None, LiveSweepScreen))
    elif name == "profile":
        from flopscope.tui.app.launch import kernels_app

        app = kernels_app(
            tmp_path / "report.ncu-rep", live=ProfileScreen(_blocking_job(done), "ncu: true")
        )
        steps.append((None, ProfileScreen))
    else:
        assert name == "reconcile", name
        app = FlopscopeApp(reconcile_screen())
        steps.append((None, ReconcileScreen))
    if first[1] is not None:
        steps.append(first[1])
    return app, steps


def _many_steps(folder: Path):
    """A real training step's launches played 30 times, each pass a `step N` range, with a timing
    file beside them: more steps than the Steps screen has lines, so its keys have somewhere to
    go."""
    from flopscope.core import read_report

    from ..helpers.steps import two_step_page, write_timing

    folder.mkdir(parents=True, exist_ok=True)
    page = two_step_page(folder / "steps.csv", steps=30)
    write_timing(folder, {n: 0.004 + n * 1e-5 for n in range(1, 31)})
    return read_report(page)


def reconcile_screen():
    from flopscope.tui.app.screens.reconcile import ReconcileScreen

    from ..helpers.reconciled import demo_reconciled

    report, model, result = demo_reconciled()
    return ReconcileScreen(
        "Reconcile", result, ["a note"] * 40, model.train, report=report, model=model
    )


async def _reach(app, pilot, steps) -> None:
    for key, there in steps:
        if key is not None:
            await pilot.press(key)
        test = (
            there
            if not isinstance(there, type)
            else (lambda a, kind=there: isinstance(a.screen, kind))
        )
        await settle(pilot, lambda t=test: t(app))
        await _still(pilot)


async def _still(pilot) -> None:
    """Once the app is idle and its scrolling animations have ended: where a key has moved things
    to, and where the next key starts from."""
    await pilot.pause()
    await asyncio.wait_for(pilot.wait_for_scheduled_animations(), 10)


async def _moved(effect: str, key: str, before, screen, app, pilot) -> tuple[object, object]:
    """(where the reading is, its end) once `key` has had `effect`, or after 2 s without it."""
    for _ in range(100):
        await _still(pilot)
        after, end = _where(app)
        if _did(effect, key, before, after, end, screen, app):
            break
        await pilot.pause(0.02)
    return after, end


def _where(app) -> tuple[object, object]:
    """(where the reading is, where its end is): the cursor of the focused list, the text of the
    focused field, the roofline's point, else how far the focused (or first scrolling) pane is
    scrolled."""
    from textual.widgets import DataTable, Input, OptionList, Tree

    screen = app.screen
    if isinstance(screen, RooflineScreen):
        return screen.selected, len(screen.data.kernels) - 1
    focused = screen.focused
    if isinstance(focused, Input):
        return focused.value, None
    if isinstance(focused, KernelTable):
        return focused.cursor_row, len(focused.model) - 1
    if isinstance(focused, OptionList):
        return focused.highlighted, focused.option_count - 1
    if isinstance(focused, Tree):
        return focused.cursor_line, focused.last_line
    if isinstance(focused, DataTable):
        return focused.cursor_row, focused.row_count - 1
    scrolled = (
        focused
        if focused is not None and focused.max_scroll_y
        else next((w for w in screen.query("*") if w.max_scroll_y), None)
    )
    return (scrolled.scroll_y, scrolled.max_scroll_y) if scrolled is not None else (None, None)


def _did(effect: str, key: str, before, after, end, screen, app) -> bool:
    if effect == QUITS:
        return app.return_code is not None or not app.is_running
    if effect == BACK:
        return app.screen is not screen and screen not in app.screen_stack
    if effect == STAYS:
        return app.screen is screen and after == before
    if effect == TYPES:
        # typed (over a selection)
        return app.screen is screen and isinstance(after, str) and after.endswith(key)
    if app.screen is not screen or before is None or after is None:
        return False
    return {
        DOWN: lambda: after > before,
        UP: lambda: after < before,
        PAGE: lambda: after - before > 1,
        PAGE_BACK: lambda: after < before,
        LAST: lambda: after == end and end > 0,
        FIRST: lambda: after == 0,
    }[effect]()


def _help_says_q(screen) -> bool:
    """Whether `?` (the help's rows, read from the screen's active bindings) lists `q` as quitting
    there."""
    return any(
        "q" in keys.split(", ") and what in ("Quit", "Stop & quit")
        for _, keys, what in binding_rows(screen)
    )


async def test_the_walk_every_screen_and_dialog_answers_the_shared_keys(
    tmp_path, reports, monkeypatch
):
    """ONE walk through every screen and dialog of the app, each reached as a user reaches it at
    80x24, pressing the keys every screen shares and checking what each must do there (WALK): a key
    that does nothing, or the wrong thing, on any screen is a failure naming the screen and key.
    `escape` that leaves: the screen is opened again for the keys after it."""
    monkeypatch.setattr("flopscope.tui.app.screens.live_sweep.stop_all", lambda: None)
    failures = []
    for name in dict.fromkeys(n for n, _, _ in WALK):
        done = threading.Event()
        app, steps = _walk_app(name, tmp_path / name.replace(" ", "-"), reports, done)
        (tmp_path / name.replace(" ", "-")).mkdir(exist_ok=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await _reach(app, pilot, steps)
            for _, key, effect in (row for row in WALK if row[0] == name):
                screen = app.screen
                before, _ = _where(app)
                # `?` lists what q does there
                if key == "q" and _help_says_q(screen) != (effect == QUITS):
                    failures.append((name, "q as help lists it", _help_says_q(screen)))
                await pilot.press(key)
                if effect == QUITS:
                    done.set()
                    await exited(app, pilot, 40)
                    if not _did(effect, key, before, None, None, screen, app):
                        failures.append((name, key, effect))
                    break
                if effect == STAYS:  # nothing to wait for: what it could still do has 0.1 s
                    await pilot.pause(0.1)
                after, end = await _moved(effect, key, before, screen, app, pilot)
                if not _did(effect, key, before, after, end, screen, app):
                    failures.append((name, key, effect, before, after, end))
                if effect == BACK:
                    await _reach(app, pilot, steps[-1:])  # open it again for the keys after escape
        done.set()
    assert not failures, failures
