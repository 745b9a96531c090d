"""A small app around one screen (diff, reconcile): the same CSS, help and quit as the main app."""

from __future__ import annotations

from textual.app import App
from textual.screen import Screen

from .app import FlopscopeApp, SafeNotify


class ScreenApp(SafeNotify, App[None]):
    CSS_PATH = FlopscopeApp.CSS_PATH
    TITLE = "flopscope"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = FlopscopeApp.BINDINGS

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.first = screen
        self.report = None  # exports from these screens carry no report meta

    async def on_mount(self) -> None:
        await self.push_screen(self.first)

    def action_help(self) -> None:
        FlopscopeApp.action_help(self)


def run_screen_app(screen: Screen) -> int:
    app = ScreenApp(screen)
    app.run(mouse=False)
    return app.return_code or 0
