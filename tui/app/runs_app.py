"""`flopscope runs` in a terminal: the app on the run store, its Runs screen first."""

from __future__ import annotations

from pathlib import Path

from textual.events import Mount

from .app import FlopscopeApp
from .screens.runs import RunsScreen


class RunsApp(FlopscopeApp):
    """FlopscopeApp whose first screen is the Runs screen; opening a run points `app.report` at it."""

    def __init__(self, store_path: Path, sweep: str | None = None) -> None:
        super().__init__(Path("runs"))
        self.runs = RunsScreen(store_path, sweep)

    async def on_mount(self, event: Mount) -> None:
        event.prevent_default()  # FlopscopeApp.on_mount would push a Kernels screen and read `path`
        await self.push_screen(self.runs)


def run_runs_app(store_path: Path, sweep: str | None = None) -> int:
    app = RunsApp(store_path, sweep)
    app.run(mouse=False)
    return app.return_code or 0
