"""`/` on the module tree and on the sweep's points (issue 43) reads as on the tables: live as
typed, a problem under the prompt with its position, `up` recalls, escape clears the filter and then
goes back. Expected nodes and points come from plain pandas over the engine's tree and the swept
values."""

from __future__ import annotations

import pytest
from flopscope.core.analysis.scaling import Slice
from flopscope.core.table.module_tree import NODE_SEP
from flopscope.tui.app.launch import sweep_app
from flopscope.tui.app.screens.kernels import KernelsScreen, PushedKernelsScreen
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.sweep import SweepScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.widgets import Input

from ..conftest import settle
from ..helpers.app import make_app
from ..helpers.module_tree import open_tree, shown_nodes
from ..helpers.real_files import DEMO, report_of
from ..helpers.sweep_reports import shuffled

pytestmark = pytest.mark.slow


def shown_paths(screen: ModuleTreeScreen) -> set[str]:
    return {str(data["path"]) for data in shown_nodes(screen)}


async def _type(pilot, text: str) -> None:
    await pilot.press(*("space" if c == " " else c for c in text))


async def test_the_module_tree_filters_as_it_is_typed_with_the_modules_they_sit_in():
    report = report_of(DEMO)
    tree = report.module_tree()
    paths = tree["path"].astype(str)
    over = set(paths[tree["duration_s"] > 50e-6])
    expected = {""} | {"/".join(p.split("/")[:n]) for p in over for n in range(1, p.count("/") + 2)}
    assert 1 < len(expected) < len(tree)
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tree(app, pilot)
        before = shown_paths(screen)  # the first level open
        await pilot.press("slash")
        await _type(pilot, "time > 50us")
        await settle(pilot, lambda: shown_paths(screen) == expected)
        assert isinstance(app.screen, PromptScreen)  # live: no Enter yet
        status = str(screen.query_one("#modules-status").render())
        assert f"{len(over)}/{len(tree)} nodes" in status and "filter time > 50us" in status
        prompt = app.screen
        prompt.query_one(Input).value = ""
        await _type(pilot, "tme > 5us")
        await settle(pilot, lambda: bool(prompt.error))
        assert "no column 'tme' at character 1" in prompt.error
        await pilot.press("enter")  # refused: the dialog stays with the reason
        assert app.screen is prompt
        prompt.query_one(Input).value = ""
        # a name regex: mlp, mlp.0, mlp.1, mlp.2 and the modules they sit in
        await _type(pilot, "mlp")
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is screen)
        named = set(paths[tree["name"].astype(str).str.contains("mlp", case=False)])
        assert len(named) == 4 and named <= shown_paths(screen)
        assert all(
            p in named or any(n.startswith(p + NODE_SEP) or p == "" for n in named)
            for p in shown_paths(screen)
        )
        # clears the filter: the tree as it was, its nodes open as they were
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.screen is screen and shown_paths(screen) == before
        assert not screen.query_one("#modules-status").display
        await pilot.press("slash")
        await pilot.press("up")
        assert app.screen.query_one(Input).value == "mlp"
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is screen)
        await pilot.press("escape")  # no filter: back to the Kernels screen
        await settle(pilot, lambda: isinstance(app.screen, KernelsScreen))


async def test_the_sweep_points_filter_as_typed_and_enter_opens_the_point_under_the_cursor(reports):
    app = sweep_app([Slice("batch_size", {}, shuffled(reports))], "gemm")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, SweepScreen))
        screen = app.screen
        table = screen.query_one(KernelTable)
        assert len(table.model) == len(reports)
        await pilot.press("slash")
        await _type(pilot, "batch_size >= 16")
        kept = [n for n in sorted(reports) if n >= 16]
        await settle(pilot, lambda: len(table.model) == len(kept))
        assert [float(v) for v in table.model.shown()["batch_size"]] == [float(n) for n in kept]
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = "bound:memory"
        # points have none: said, not applied
        await settle(pilot, lambda: "no bound" in app.screen.error)
        app.screen.query_one(Input).value = "batch_size >= 16"
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is screen)
        status = str(screen.query_one("#sweep-filter").render())
        assert (
            f"{len(kept)}/{len(reports)} points" in status and "filter batch_size >= 16" in status
        )
        assert len(screen.shown()) == len(kept)  # `e` writes the points shown
        await pilot.press("j", "enter")  # the second point shown: batch size 32
        await settle(pilot, lambda: isinstance(app.screen, PushedKernelsScreen))
        assert "batch_size = 32 " in app.screen.label
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is screen)
        # clears the filter; the sweep is the app's first screen: it stays
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.screen is screen and len(table.model) == len(reports)
        assert not screen.query_one("#sweep-filter").display
