"""`t` on the module tree: the training steps as `report --by module` prints them below the tree,
one line a step then the median step (wall time from the timing run, kernel time, idle share, FLOPs,
MFU over wall and over kernel time), and where each number comes from. The table and its lines are
the CLI's own (presentation/step_mfu.py), fitted to the screen's width."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pandas as pd
from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Static

from ....core.analysis.step_mfu import StepMfu
from ....core.common import display_text
from ...presentation.step_mfu import sources, steps_frame, steps_table
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from ..widgets.key_scroll import KeyScroll
from .export import ask_export
from .keys import BACK, EXPORT

# the scroll pane's padding and its scrollbar
_MARGIN = 3


class StepsScreen(Screen):
    HELP_TITLE = "Steps"
    BINDINGS: ClassVar[list[BindingType]] = [BACK, EXPORT]

    def __init__(self, steps: StepMfu, export_to: Path) -> None:
        super().__init__()
        self.steps = steps
        self.export_to = export_to

    @property
    def crumbs(self) -> list[str]:
        return ["steps"]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="steps-title")
        with KeyScroll(id="steps-pane"):
            yield Static(id="steps-table")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._fit(self.app.size.width)
        self.query_one(KeyScroll).focus()

    def on_resize(self, event: Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        table, hidden = steps_table(self.steps, max(20, width - _MARGIN))
        notes = [display_text(line) for line in sources(self.steps)]  # a path from the report
        if hidden:
            notes.append(f"hidden at {width} columns: {', '.join(hidden)}; widen or export (e)")
        lines = [Text(line, style="dim") for line in notes]
        self.query_one("#steps-table", Static).update(Group(table, Text(""), *lines))

    def action_back(self) -> None:
        self.dismiss()

    async def action_export(self) -> None:
        rows: pd.DataFrame = steps_frame(self.steps)
        await ask_export(self.app, rows.copy, self.export_to, what="steps")
