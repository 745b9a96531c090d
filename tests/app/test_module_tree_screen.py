"""The module tree in the app: `g` after NVTX ranges opens it on the bundled training step;
`l`/`h`/`*` open and close nodes; `o`/`s` sort each node's children; `r` draws a node's launches on
the Roofline screen; `e` exports it; `g` goes on to the Kernels screen by name."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from flopscope.core.store.run_store import Store
from flopscope.tui.app.screens.kernels import KernelsScreen
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.screens.sort import SortScreen
from textual.widgets import OptionList, Tree

from ..conftest import settle
from ..helpers.app import make_app, screen_lines
from ..helpers.cli import run_cli
from ..helpers.module_tree import open_tree, shown_names
from ..helpers.modules import TOP_MODULES, module_launches
from ..helpers.real_files import DEMO, H100, report_of


async def test_g_opens_the_tree_and_its_keys_open_close_and_leave_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tree(app, pilot)
        assert shown_names(screen) == ["(all launches)", "measure", "forward", "optimizer"]
        await pilot.press("j", "j")  # measure, forward
        assert screen.query_one(Tree).cursor_node.data["name"] == "forward"
        await pilot.press("l")
        assert shown_names(screen)[3:7] == ["attn", "mlp", "norm2", "norm1"]  # longest first
        await pilot.press("h")
        assert "attn" not in shown_names(screen)
        await pilot.press("asterisk")
        assert {"mlp.0", "mlp.1", "mlp.2"} <= set(shown_names(screen))
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        out = tmp_path / "train_transformer_bf16_bs8.ncu-rep-modules.csv"
        await settle(pilot, out.exists)
        written = pd.read_csv(out, keep_default_na=False)
        assert len(written) == len(screen.tree_rows) and {"path", "depth"} <= set(written.columns)
        await pilot.press("g")
        await settle(
            pilot, lambda: isinstance(app.screen, KernelsScreen) and app.screen.by == "name"
        )


def children_of(screen: ModuleTreeScreen, name: str) -> list[str]:
    tree = screen.query_one(Tree)
    nodes = [tree.get_node_at_line(line) for line in range(tree.last_line + 1)]
    (node,) = [n for n in nodes if n is not None and n.data["name"] == name]
    return [str(child.data["name"]) for child in node.children]


async def _pick_sort(app, pilot, column: str) -> None:
    await pilot.press("o")
    picker = app.screen
    assert isinstance(picker, SortScreen)
    names = [name for name, _ in picker.choices]
    picker.query_one(OptionList).highlighted = names.index(column)
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))


async def test_o_sorts_each_nodes_children_by_a_column_and_s_flips_it_keeping_the_tree(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    report = report_of(DEMO)
    modules = TOP_MODULES
    flop = {
        m: float(report.kernels.loc[module_launches(report.kernels, m), "flop"].sum())
        for m in modules
    }
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tree(app, pilot)
        await pilot.press("j", "j", "l")
        assert screen.query_one(Tree).cursor_node.data["name"] == "forward"
        await _pick_sort(app, pilot, "flop")
        assert children_of(screen, "forward") == sorted(modules, key=flop.get, reverse=True)
        # the cursor stays on its node
        assert screen.query_one(Tree).cursor_node.data["name"] == "forward"
        assert "sorted by FLOP ↓" in screen.crumbs
        await pilot.press("s")
        assert children_of(screen, "forward") == sorted(modules, key=flop.get)
        # open and closed as they were
        assert "attn" in shown_names(screen) and "mlp.0" not in shown_names(screen)
        await pilot.press("asterisk")
        # the shape is the same
        assert set(children_of(screen, "mlp")) == {"mlp.0", "mlp.1", "mlp.2"}
        await pilot.press("e")  # the export writes the nodes in the order shown
        await pilot.pause()
        await pilot.press("enter")
        out = tmp_path / "train_transformer_bf16_bs8.ncu-rep-modules.csv"
        await settle(pilot, out.exists)
        written = pd.read_csv(out, keep_default_na=False)
        tops = [
            p.rsplit("/", 1)[-1] for p in written["path"] if p.count("/") == 2 and "/forward/" in p
        ]
        assert tops == sorted(modules, key=flop.get)


async def test_r_draws_the_launches_under_the_node_by_name_and_c_leaves_the_table_behind_whole(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    report = report_of(DEMO)
    mine = report.kernels[module_launches(report.kernels, "mlp")]
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tree(app, pilot)
        await pilot.press("j", "j", "l")
        tree = screen.query_one(Tree)
        while tree.cursor_node.data["name"] != "mlp":
            await pilot.press("j")
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        roofline = app.screen
        rows = roofline.rows
        assert int(rows["count"].sum()) == len(mine) and len(rows) == mine["kernel_full"].nunique()
        assert set(rows["kernel_full"]) == set(mine["kernel_full"])
        assert rows["duration_s"].sum() == pytest.approx(mine["duration_s"].sum(), rel=1e-12)
        # judged against the datasheet: the module's launches, not the table behind
        await pilot.press("c")
        await settle(pilot, lambda: roofline.roof.kind != "clock")
        assert int(roofline.rows["count"].sum()) == len(mine)
        assert len(app.kernels.report.kernels) == len(report.kernels)


async def test_a_run_without_nvtx_ranges_says_why_its_tree_is_one_node_and_what_fills_it(
    tmp_path,
):
    """A stored run profiled without --modules: the screen names its own command again, with
    --modules."""
    folder = tmp_path / "bench-run"
    folder.mkdir()
    shutil.copy(H100 / "gemm_bf16_full.ncu-rep.xz", folder / "report.ncu-rep.xz")  # no NVTX ranges
    (folder / "run.json").write_text(
        json.dumps({"command": ["python3", "bench.py", "--n", "8 16"], "host": "node2"})
    )
    home = tmp_path / "home"
    assert run_cli("import", folder, home=home).returncode == 0
    with Store(home / "flopscope.db") as store:
        report = store.load("bench-run")
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tree(app, pilot)
        text = " ".join(line.strip() for line in screen_lines(app))
        assert "no NVTX ranges, so its module tree is one node" in text
        assert "`flopscope profile --modules --host node2 -- python3 bench.py --n '8 16'`" in text
