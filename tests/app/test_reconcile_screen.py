"""Issue 19.7 on the reconcile screen (the demo's bf16 transformer step against the Block it ran):
`enter` on a module drills down to the kernels its measured FLOPs come from and `escape` comes back,
`/` filters modules as every other table filters its rows, and columns that do not fit drop with the
`hidden:` note."""

from __future__ import annotations

import re

from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.reconcile import ReconcileScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.cli.model import _reconcile_lines

from ..conftest import settle
from ..helpers.app import pushed_kernels, screen_lines
from ..helpers.reconciled import demo_reconciled


def reconcile_app(report, model, result) -> FlopscopeApp:
    return FlopscopeApp(
        ReconcileScreen(
            "Reconcile demo with Block",
            result,
            _reconcile_lines(result),
            model.train,
            report=report,
            model=model,
        )
    )


async def filtered(pilot, app, text: str) -> None:
    await pilot.press("slash")
    await settle(pilot, lambda: isinstance(app.screen, PromptScreen))
    await pilot.press(*text, "enter")
    await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
    await pilot.pause(0.05)


def status(app) -> str:
    return str(app.screen.query_one("#status").render())


async def test_enter_on_a_module_shows_its_kernels_and_escape_comes_back():
    report, model, result = demo_reconciled()
    # Independent of the matching code: launches with a range named exactly `mlp.0` somewhere on
    # their NVTX path (forward `measure/forward/mlp/mlp.0/...`, backward
    # `.../backward/mlp/backward/mlp.0`).
    expected = sum("mlp.0" in re.split(r"/| \| ", path) for path in report.kernels["nvtx"].dropna())
    assert expected == 10
    app = reconcile_app(report, model, result)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
        reconciling = app.screen
        await filtered(pilot, app, r"^mlp\.0$")
        assert status(app).startswith("1/8 modules")
        await pilot.press("enter")
        await pushed_kernels(app, pilot)
        kernels = app.screen
        assert len(kernels.report.kernels) == expected
        assert kernels.model.rows["count"].sum() == expected
        assert "Module mlp.0" in str(kernels.query_one("#point-title").render())
        # the header counts the module's, not 91
        assert f"{expected} launches" in "\n".join(screen_lines(app))
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is reconciling)
        assert reconciling.current_row()["module_name"] == "mlp.0"  # where the drill-down started


async def test_slash_filters_modules_and_escape_shows_all_again():
    report, model, result = demo_reconciled()
    names = [m.name for m in result.modules]
    app = reconcile_app(report, model, result)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
        await filtered(pilot, app, "norm")
        table = app.screen.query_one(KernelTable)
        shown = [line.split()[0] for line in table.visible_text()[1:] if line.strip()]
        assert shown == [n for n in names if "norm" in n] == ["norm1", "norm2"]
        assert status(app).startswith(f"2/{len(names)} modules") and "filter norm" in status(app)
        await pilot.press("escape")  # clears the filter; the screen is the app's first, so it stays
        await pilot.pause(0.05)
        assert app.screen.query_one(KernelTable).model is not None and len(app.screen.model) == len(
            names
        )


async def test_columns_that_do_not_fit_are_named_hidden():
    """Training adds three backward columns: 11 in all, which 80 columns cannot hold; the status
    line names the ones dropped (the measured FLOPs first), which are missing from the header; 200
    columns hold all."""
    report, model, result = demo_reconciled()
    app = reconcile_app(report, model, result)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
        await pilot.pause(0.05)
        note = status(app).split("hidden: ")[1]
        header = app.screen.query_one(KernelTable).visible_text()[0]
        assert "Fwd measured" in note and "Fwd measured" not in header
        assert "Module" in header and "Fwd ratio" in header and "Flag" in header
    app = reconcile_app(report, model, result)
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
        await pilot.pause(0.05)
        assert "hidden" not in status(app)
        assert "Bwd measured" in app.screen.query_one(KernelTable).visible_text()[0]


async def test_the_notes_pane_shows_its_focus_and_scrolls_with_j():
    """Issue 43.4: tab focused the notes with no mark on screen, and only the arrows scrolled
    them."""
    report, model, result = demo_reconciled()
    app = reconcile_app(report, model, result)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
        notes = app.screen.query_one("#reconcile-notes")
        rows = range(notes.region.y, notes.region.bottom)
        assert not any(screen_lines(app)[r].startswith("▌") for r in rows)
        await pilot.press("tab")
        await settle(pilot, lambda: app.screen.focused is notes)
        # a bar at its left edge, NO_COLOR too
        assert all(screen_lines(app)[r].startswith("▌") for r in rows)
        if notes.max_scroll_y:
            await pilot.press("j")
            assert notes.scroll_y == 1
