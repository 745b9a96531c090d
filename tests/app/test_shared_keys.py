"""Issue 19.7: the keys every screen shares do the same thing everywhere, at 80x24 with no mouse:
`j`/`k` and the page keys move (a row, or the text), `escape` leaves a pushed screen and closes
help. Each screen is reached the way a user reaches it, and the key is checked for effect, not only
for being bound."""

from __future__ import annotations

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.analysis.scaling import Slice
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import runs_app, sweep_app
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.help import HelpScreen, screen_title, sentence_case
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.reconcile import ReconcileScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from textual.binding import Binding

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready
from ..helpers.reconciled import demo_reconciled
from ..helpers.sweep_reports import shuffled

SIZE = (80, 24)
MW = "v100_ncar_miniweather_fp64_full.ncu-rep"


def position(app) -> tuple:
    """Where the reading is: the focused widget's cursor row, or how far it is scrolled; the
    roofline's point."""
    screen = app.screen
    if isinstance(screen, RooflineScreen):
        return ("point", screen.selected)
    focused = screen.focused
    if focused is not None and getattr(focused, "cursor_row", None) is not None:
        return ("row", focused.cursor_row)
    scrolled = (
        focused
        if focused is not None and focused.max_scroll_y
        else next(w for w in screen.query("*") if w.max_scroll_y)
    )
    return ("scroll", scrolled.scroll_y)


async def kernels(pilot, app):
    await ready(app, pilot)


async def opened(pilot, app, key: str, kind: type):
    await ready(app, pilot)
    await pilot.press(key)
    await settle(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause(0.1)


async def drive(name: str, tmp_path, sweep_points):
    """The app and a coroutine that brings it to the screen named."""
    if name in ("kernels", "kernel", "roofline", "help"):
        app = make_app(read_report(fixture_path(MW)))
        key, kind = {
            "kernel": ("enter", KernelScreen),
            "roofline": ("r", RooflineScreen),
            "help": ("question_mark", HelpScreen),
        }.get(name, (None, None))
        return app, (
            (lambda pilot: opened(pilot, app, key, kind))
            if key
            else (lambda pilot: kernels(pilot, app))
        )
    if name == "runs":
        store = Store(tmp_path / "runs.db")
        for n in range(30):  # more runs than the screen has rows: a page key has somewhere to go
            store.save(read_report(fixture_path(H100)), f"run{n}")
        store.close()
        app = runs_app(tmp_path / "runs.db")
        return app, lambda pilot: settle(
            pilot, lambda: app.screen is app.first and app.first.model is not None
        )
    if name == "diff":
        app = FlopscopeApp(
            DiffScreen(
                diff_runs(read_report(fixture_path(MW)), read_report(fixture_path(H100))),
                "mw",
                "h100",
            )
        )
        return app, lambda pilot: settle(
            pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.model is not None
        )
    if name == "sweep":
        app = sweep_app([Slice("batch_size", {}, sweep_points)], "sweep")
        return app, lambda pilot: settle(pilot, lambda: app.screen.query("#sweep-table"))
    if name == "reconcile":
        app = FlopscopeApp(reconcile_screen())
        return app, lambda pilot: settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
    raise AssertionError(name)


def reconcile_screen() -> ReconcileScreen:
    """The demo's training step reconciled with the Block it ran (8 modules, a page of 9 rows at
    80x24)."""
    report, model, result = demo_reconciled()
    return ReconcileScreen("Reconcile", result, ["a note"], model.train, report=report, model=model)


SCREENS = ["kernels", "kernel", "roofline", "help", "runs", "diff", "sweep", "reconcile"]


@pytest.mark.parametrize("name", SCREENS)
async def test_j_k_and_the_page_keys_move_on_every_screen(name, tmp_path, reports):
    app, reach = await drive(name, tmp_path, shuffled(reports))
    async with app.run_test(size=SIZE) as pilot:
        await reach(pilot)
        start = position(app)
        for forward, back in (("j", "k"), ("pagedown", "pageup")):
            await pilot.press(forward)
            await pilot.pause(0.05)
            moved = position(app)
            assert moved != start and moved[1] > start[1], (name, forward, start, moved)
            await pilot.press(back)
            await pilot.pause(0.05)
            assert position(app) == start, (name, back)


@pytest.mark.parametrize("name", ["kernel", "roofline", "help"])
async def test_escape_goes_back_to_the_kernels(name, tmp_path, reports):
    app, reach = await drive(name, tmp_path, shuffled(reports))
    async with app.run_test(size=SIZE) as pilot:
        await reach(pilot)
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is app.kernels)


async def test_escape_leaves_a_reconcile_screen_opened_from_another(tmp_path, reports):
    app, reach = await drive("reconcile", tmp_path, shuffled(reports))
    async with app.run_test(size=SIZE) as pilot:
        await reach(pilot)
        first = app.screen
        await app.push_screen(reconcile_screen())
        await pilot.pause(0.1)
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is first)
        await pilot.press("escape")  # the first screen has nowhere to go back to: it stays
        await pilot.pause(0.1)
        assert app.screen is first


@pytest.mark.parametrize("name", [s for s in SCREENS if s != "help"])
async def test_question_mark_lists_the_keys_of_each_screen(name, tmp_path, reports):
    """`?` on every screen: titled with the screen's name, each of its own keys (from its BINDINGS,
    shared ones included) on a line with that key and its words, said to be this screen's."""
    app, reach = await drive(name, tmp_path, shuffled(reports))
    async with app.run_test(size=SIZE) as pilot:
        await reach(pilot)
        under = app.screen
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert help_screen.target is under
        title = str(help_screen.query_one("Label").render())
        assert title.startswith(f"Keys: {screen_title(under)} screen"), title
        listed = {(what, where): keys for where, keys, what in help_screen.rows}
        for binding in type(under).BINDINGS:
            # off here (no filter to clear, one GPU)
            if under.check_action(binding.action, ()) is False:
                continue
            keys = listed.get((sentence_case(binding.description), "this screen"))
            first = binding.key.split(",")[0]
            assert (
                keys is not None and app.get_key_display(Binding(first, binding.action)) in keys
            ), (name, binding)
