"""Driving the app's module tree under Pilot: open it from the Kernels screen as a user does (`g`
past the launch and NVTX groupings), and read the nodes it shows."""

from __future__ import annotations

from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from textual.widgets import Tree

from ..conftest import settle
from .app import ready, regrouped


def shown_nodes(screen: ModuleTreeScreen) -> list[dict]:
    """The data of the nodes shown, top to bottom."""
    tree = screen.query_one(Tree)
    nodes = (tree.get_node_at_line(line) for line in range(tree.last_line + 1))
    return [node.data for node in nodes if node is not None and node.data is not None]


def shown_names(screen: ModuleTreeScreen) -> list[str]:
    """The names of the nodes shown, top to bottom."""
    return [str(data["name"]) for data in shown_nodes(screen)]


async def open_tree(app, pilot) -> ModuleTreeScreen:
    """The Kernels screen's `g` pressed until the tree opens: by launch, by NVTX range, then the
    tree."""
    await ready(app, pilot)
    for by in ("launch", "nvtx"):
        await pilot.press("g")
        await regrouped(app, pilot, by)
    await pilot.press("g")
    await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
    return app.screen
