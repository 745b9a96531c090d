"""`flopscope reconcile` in the app: analytic vs measured FLOPs per module, flags, and the step figures."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import ClassVar

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from ....core.display_text import display_text
from ....core.reconcile import Reconciliation
from ..widgets.footer import KeyFooter
from .back import BackScreen
from .export import ask_export
from .keys import BACK, EXPORT


def _shown(cell: Text) -> Text:
    """A cell with any control character of a module name (from the report's NVTX ranges) escaped."""
    plain = display_text(cell.plain)
    return cell if plain == cell.plain else Text(plain, style=cell.style)


class ReconcileScreen(BackScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        EXPORT,
        BACK,
        # j/k move a row as on every other table (the DataTable itself binds only the arrows and page keys)
        Binding("j", "row(1)", "Row down", show=False, id="reconcile.row_down"),
        Binding("k", "row(-1)", "Row up", show=False, id="reconcile.row_up"),
    ]

    def __init__(self, title: str, titles: list[str], rows: list[list[Text]], lines: list[str],
                 result: Reconciliation) -> None:
        super().__init__()
        self.title_text, self.titles, self.rows, self.lines, self.result = title, titles, rows, lines, result

    def compose(self) -> ComposeResult:
        yield Static(Text(display_text(self.title_text), style="bold"), id="reconcile-title")
        yield DataTable(id="reconcile-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="reconcile-notes"):
            yield Static(Text("\n".join(display_text(line) for line in self.lines)))
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*self.titles)
        for cells in self.rows:
            table.add_row(*map(_shown, cells))
        table.focus()

    def action_row(self, step: int) -> None:
        table = self.query_one(DataTable)
        if step > 0:
            table.action_cursor_down()
        else:
            table.action_cursor_up()

    async def action_export(self) -> None:
        frame = pd.DataFrame([asdict(m) for m in self.result.modules])
        await ask_export(self.app, lambda: frame, Path.cwd() / "reconcile.csv", "module table")
