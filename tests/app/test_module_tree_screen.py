"""The module tree in the app: `g` after NVTX ranges opens it on the bundled training step; `l`/`h`/`*` open
and close nodes; `e` exports it; `g` goes on to the Kernels screen by name."""

from __future__ import annotations

import pandas as pd
from flopscope.tui.app.screens.kernels import KernelsScreen
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from textual.widgets import Tree

from ..conftest import settle
from ..helpers.app import make_app, ready, regrouped
from ..helpers.real_files import DEMO, report_of


def shown_names(screen: ModuleTreeScreen) -> list[str]:
    """The names of the nodes shown, top to bottom."""
    tree = screen.query_one(Tree)
    nodes = (tree.get_node_at_line(line) for line in range(tree.last_line + 1))
    return [str(node.data["name"]) for node in nodes if node is not None and node.data is not None]


async def _open_tree(app, pilot) -> ModuleTreeScreen:
    await ready(app, pilot)
    for by in ("launch", "nvtx"):
        await pilot.press("g")
        await regrouped(app, pilot, by)
    await pilot.press("g")
    await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
    return app.screen


async def test_g_opens_the_tree_and_its_keys_open_close_and_leave_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open_tree(app, pilot)
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
        await settle(pilot, lambda: isinstance(app.screen, KernelsScreen) and app.screen.by == "name")
