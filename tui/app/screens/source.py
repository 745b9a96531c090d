"""One launch's SASS lines with the warp samples ncu took at each (the Kernel screen's `v`): in address order,
the cursor on the hottest; `n` the next hottest line, `p` the one before, `o` address or hottest-first order."""

from __future__ import annotations

from typing import ClassVar

import pandas as pd
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from ....core import FlopscopeError
from ....core.common import display_text
from ....core.readers.ncu_rep_source import SourcePage
from ....core.report import Report
from ...presentation import format as fmt
from ...presentation.source_page import COLUMNS, line_cells, row_source
from ..widgets.footer import KeyFooter
from .keys import BACK


class SourceScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "hot(1)", "Next hot line", id="source.next_hot"),
        Binding("p", "hot(-1)", "Previous hot line", id="source.previous_hot"),
        Binding("o", "order", "Hottest first", id="source.order"),
        Binding("j", "cursor(1)", "Down", show=False, id="source.down"),
        Binding("k", "cursor(-1)", "Up", show=False, id="source.up"),
        BACK,
    ]

    def __init__(self, report: Report, row: pd.Series, by: str = "name") -> None:
        super().__init__()
        self.report, self.row, self.by = report, row, by
        self.page: SourcePage | None = None
        self.hot_rank = 0  # which of the hottest lines the cursor is on (0: the hottest)
        self.by_heat = False  # rows hottest first instead of in address order

    def compose(self) -> ComposeResult:
        yield Static(Text("Reading the launch's source counters…", style="dim"), id="source-title")
        yield DataTable(id="source-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self._read()

    @work(thread=True, exclusive=True, group="source")
    def _read(self) -> None:
        try:
            page, which = row_source(self.report, self.row, self.by)
            title = self._title(page, which)
        except FlopscopeError as err:
            page, title = None, Text(str(err))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, page, title)

    def _title(self, page: SourcePage | None, which: str) -> Text:
        if page is None:
            return Text("No launch of this report behind the row.")
        if not page.lines:
            return Text(f"Launch {which}: {page.reason}")
        return Text(
            f"Launch {which} · {fmt.integer(page.samples)} warp samples over {fmt.integer(len(page.lines))} SASS "
            f"lines · {display_text(page.kernel)}",
            no_wrap=True,
            overflow="ellipsis",
        )

    def _show(self, page: SourcePage | None, title: Text) -> None:
        self.page = page
        self.query_one("#source-title", Static).update(title)
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        self._fill()
        table.focus()
        self._to_hot(0)

    def _lines(self):
        assert self.page is not None  # filled only once read
        return self.page.hottest() if self.by_heat else list(self.page.lines)

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        if self.page is None:
            return
        for line in self._lines():
            table.add_row(*line_cells(line, self.page.samples), key=str(line.address))

    def _to_hot(self, rank: int) -> None:
        if self.page is None or not self.page.lines:
            return
        hottest = self.page.hottest()
        self.hot_rank = rank % len(hottest)
        table = self.query_one(DataTable)
        table.move_cursor(row=table.get_row_index(str(hottest[self.hot_rank].address)))

    def action_hot(self, step: int) -> None:
        self._to_hot(self.hot_rank + step)

    def action_order(self) -> None:
        self.by_heat = not self.by_heat
        self._fill()
        self._to_hot(self.hot_rank)

    def action_cursor(self, step: int) -> None:
        table = self.query_one(DataTable)
        table.move_cursor(row=table.cursor_row + step)

    def action_back(self) -> None:
        self.dismiss()
