"""The app's screens at 80x24 (and at 120x40, where the Kernels screen shows the selected row's
details beside the table) compared with stored SVG snapshots (Textual's own export,
`App.export_screenshot`).

pytest-textual-snapshot does the same, but pins syrupy 4.8.0, which needs pytest < 9. The screens
are those of the bundled demo (`flopscope demo`): Kernels, Kernel (enter on the first row), its help
(?) and Roofline (r). A change meant to change a screen updates the snapshots with `python -m pytest
tests/app/test_snapshots.py --snapshot-update` (or
FLOPSCOPE_SNAPSHOT_UPDATE=1); review the SVGs in the diff (a browser shows them) before committing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.cli.main import bundled_example

from ..conftest import settle
from ..helpers.snapshots import SIZE, check


async def test_demo_screens_match_their_snapshots(tmp_path, monkeypatch, snapshot_update):
    demo = Path(bundled_example())
    # the header names the file as opened: relative, the same on every machine
    monkeypatch.chdir(demo.parent)
    app = kernels_app(demo.name)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.kernels
        await settle(
            pilot,
            lambda: screen.model is not None and not screen.query_one(KernelTable).loading,
            500,
        )
        shots = {"kernels": app.export_screenshot()}
        await pilot.press("enter")
        # its "ncu rules" section is read from the file after the screen shows: the shot waits for
        # it
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen) and app.screen.rules_read)
        shots["kernel"] = app.export_screenshot()
        # `?` there: the help lists the Kernel screen's keys, its panes' words for them
        from flopscope.tui.app.screens.help import HelpScreen

        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause(0.1)
        shots["help-kernel"] = app.export_screenshot()
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        await pilot.press("escape", "r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        shots["roofline"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)


async def test_wide_demo_screens_match_their_snapshots(tmp_path, monkeypatch, snapshot_update):
    """120x40: the Kernels screen with its details beside the table (the split), and the Kernel
    screen."""
    demo = Path(bundled_example())
    monkeypatch.chdir(demo.parent)
    app = kernels_app(demo.name)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.kernels
        await settle(
            pilot,
            lambda: screen.model is not None and not screen.query_one(KernelTable).loading,
            500,
        )
        await pilot.pause(0.1)
        shots = {"kernels-120x40": app.export_screenshot()}
        await pilot.press("enter")
        # its "ncu rules" section is read from the file after the screen shows: the shot waits for
        # it
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen) and app.screen.rules_read)
        await pilot.pause(0.1)
        shots["kernel-120x40"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)


async def test_the_module_tree_matches_its_snapshot(tmp_path, monkeypatch, snapshot_update):
    """`g` three times on the demo: the model's module tree at 80x24, its first level open."""
    from flopscope.tui.app.screens.module_tree import ModuleTreeScreen

    demo = Path(bundled_example())
    monkeypatch.chdir(demo.parent)
    app = kernels_app(demo.name)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.kernels
        for by in ("name", "launch", "nvtx"):
            await settle(
                pilot,
                lambda b=by: screen.by == b and not screen.query_one(KernelTable).loading,
                500,
            )
            await pilot.press("g")
        await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
        await pilot.press("asterisk")
        await pilot.pause(0.1)
        svg = app.export_screenshot()
    check("module-tree", svg, snapshot_update, tmp_path)


async def test_the_dialogs_and_the_wide_roofline_match_their_snapshots(
    tmp_path, monkeypatch, snapshot_update
):
    """The Kernels screen's dialogs at 80x24 (help `?`, the sort picker `o`, the export prompt `e`,
    the filter prompt `/`) and the toast of `y` (copy the full name); at 160x48, the Kernels
    screen's split and the Roofline screen, where its legend names points whole."""
    from flopscope.tui.app.screens.export import ExportScreen
    from flopscope.tui.app.screens.help import HelpScreen
    from flopscope.tui.app.screens.prompt import PromptScreen
    from flopscope.tui.app.screens.sort import SortScreen

    # The export prompt shows the default path's end: the demo in a folder of a fixed, long name, so
    # what shows is the same wherever the tests run.
    demo = tmp_path / ("snapshot-" + "x" * 40) / "examples" / Path(bundled_example()).name
    demo.parent.mkdir(parents=True)
    shutil.copyfile(bundled_example(), demo)
    monkeypatch.chdir(demo.parent)
    shots = {}
    app = kernels_app(demo.name)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.kernels
        await settle(
            pilot,
            lambda: screen.model is not None and not screen.query_one(KernelTable).loading,
            500,
        )
        for key, kind, name in (
            ("question_mark", HelpScreen, "help"),
            ("o", SortScreen, "sort-picker"),
            ("e", ExportScreen, "export-prompt"),
            ("slash", PromptScreen, "filter-prompt"),
        ):
            await pilot.press(key)
            await settle(pilot, lambda k=kind: isinstance(app.screen, k))
            await pilot.pause(0.1)
            shots[name] = app.export_screenshot()
            await pilot.press("escape")
            await settle(pilot, lambda: app.screen is screen)
        # `y`: the first row's full name copied, as the toast under the table says
        await pilot.press("y")
        await pilot.pause(0.1)
        shots["copy-name"] = app.export_screenshot()
    app = kernels_app(demo.name)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.kernels
        await settle(
            pilot,
            lambda: screen.model is not None and not screen.query_one(KernelTable).loading,
            500,
        )
        await pilot.pause(0.1)
        shots["kernels-160x48"] = app.export_screenshot()
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        await pilot.pause(0.1)
        shots["roofline-160x48"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)
