"""A small app around one screen (diff, reconcile): the main app with that screen first, so that what the
screen opens (a module's kernels, a kernel) works as it does there: the same CSS, help and quit."""

from __future__ import annotations

from pathlib import Path

from textual.events import Mount
from textual.screen import Screen

from .app import FlopscopeApp


class ScreenApp(FlopscopeApp):
    def __init__(self, screen: Screen) -> None:
        super().__init__(Path("flopscope"))
        self.first = screen  # exports from this screen carry no report meta (`report` stays None)

    async def on_mount(self, event: Mount) -> None:
        event.prevent_default()  # FlopscopeApp.on_mount would push a Kernels screen and read `path`
        await self.push_screen(self.first)


def run_screen_app(screen: Screen) -> int:
    app = ScreenApp(screen)
    app.run(mouse=False)
    return app.return_code or 0
