"""The terminal app on a comparison of two stored runs (`flopscope diff A B` on a terminal)."""

from __future__ import annotations

import pandas as pd
from textual.app import App

from .app import FlopscopeApp
from .screens.diff import DiffScreen


class DiffApp(App[None]):
    CSS_PATH = FlopscopeApp.CSS_PATH
    TITLE = "flopscope diff"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = FlopscopeApp.BINDINGS

    def __init__(self, rows: pd.DataFrame, name_a: str, name_b: str) -> None:
        super().__init__()
        self.screen_diff = DiffScreen(rows, name_a, name_b)
        self.report = None  # exports carry no report meta

    async def on_mount(self) -> None:
        await self.push_screen(self.screen_diff)

    def action_help(self) -> None:
        FlopscopeApp.action_help(self)


def run_diff_app(rows: pd.DataFrame, name_a: str, name_b: str) -> int:
    app = DiffApp(rows, name_a, name_b)
    app.run(mouse=False)
    return app.return_code or 0
