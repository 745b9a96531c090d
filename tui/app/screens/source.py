"""One launch's SASS lines with the warp samples ncu took at each (the Kernel screen's `v`): in
address order, the cursor on the hottest; `n` the next hottest line, `p` the one before, `o` address
or hottest-first order, `c` the page by CUDA line (each line's SASS lines summed) and back. The CUDA
text shows beside each line where the report embeds the files."""

from __future__ import annotations

from typing import ClassVar

import pandas as pd
from rich.console import Group, RenderableType
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
from ....core.readers.source_cuda import NO_CUDA_LINES, by_cuda_line, file_lines, hottest_cuda
from ....core.report import Report
from ...presentation import format as fmt
from ...presentation.source_page import (
    CUDA_COLUMNS,
    NO_SASS_NOTE,
    cuda_cells,
    line_cells,
    page_columns,
    row_source,
    sass_missing,
)
from ..widgets.footer import KeyFooter
from ..widgets.key_data_table import KeyDataTable
from .keys import BACK


class SourceScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "hot(1)", "Next hot line", id="source.next_hot"),
        Binding("p", "hot(-1)", "Previous hot line", id="source.previous_hot"),
        Binding("o", "order", "Hottest first", id="source.order"),
        Binding("c", "cuda", "CUDA lines", id="source.cuda_lines"),
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
        self.by_cuda = False  # one row per CUDA line instead of per SASS line
        self.files: dict[str, list[str]] | None = None  # the embedded CUDA files' lines

    def compose(self) -> ComposeResult:
        yield Static(Text("Reading the launch's source counters…", style="dim"), id="source-title")
        yield KeyDataTable(id="source-table", cursor_type="row", zebra_stripes=True)
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

    def _title(self, page: SourcePage | None, which: str) -> RenderableType:
        if page is None:
            return Text("No launch of this report behind the row.")
        if not page.lines:
            return Text(f"Launch {which}: {page.reason}")
        title = Text(
            f"Launch {which} · {fmt.integer(page.samples)} warp samples over"
            f" {fmt.integer(len(page.lines))} SASS lines · {display_text(page.kernel)}",
            no_wrap=True,
            overflow="ellipsis",
        )
        if sass_missing(page):  # said once above the table, not `???` on every line
            return Group(title, Text(NO_SASS_NOTE, style="dim"))
        return title

    def _show(self, page: SourcePage | None, title: RenderableType) -> None:
        self.page = page
        self.files = file_lines(page) if page is not None and page.files else None
        self.query_one("#source-title", Static).update(title)
        self._fill()
        self.query_one(DataTable).focus()
        # once the new title and rows are laid out: scrolled to with the table's final height
        self.call_after_refresh(self._to_hot, 0)

    def _rows(self) -> list[tuple[str, list[str]]]:
        """(row key, cells) in the order shown: SASS lines by address or heat, or CUDA lines
        likewise."""
        assert self.page is not None  # filled only once read
        total = self.page.samples
        if self.by_cuda:
            lines = by_cuda_line(self.page)
            shown = hottest_cuda(lines) if self.by_heat else lines
            return [(f"{c.file}:{c.line}", cuda_cells(c, total)) for c in shown]
        sass = self.page.hottest() if self.by_heat else list(self.page.lines)
        return [(str(line.address), line_cells(line, total, self.files)) for line in sass]

    def _hottest_keys(self) -> list[str]:
        assert self.page is not None
        if self.by_cuda:
            return [f"{c.file}:{c.line}" for c in hottest_cuda(by_cuda_line(self.page))]
        return [str(line.address) for line in self.page.hottest()]

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        if self.page is None:
            return
        table.add_columns(*(CUDA_COLUMNS if self.by_cuda else page_columns(self.page)))
        for key, cells in self._rows():
            table.add_row(*cells, key=key)

    def _to_hot(self, rank: int) -> None:
        if self.page is None or not self.page.lines:
            return
        hottest = self._hottest_keys()
        if not hottest:
            return
        self.hot_rank = rank % len(hottest)
        table = self.query_one(DataTable)
        table.move_cursor(row=table.get_row_index(hottest[self.hot_rank]))

    def action_hot(self, step: int) -> None:
        self._to_hot(self.hot_rank + step)

    def action_order(self) -> None:
        self.by_heat = not self.by_heat
        self._fill()
        self._to_hot(self.hot_rank)

    def action_cuda(self) -> None:
        """SASS lines or CUDA lines; a page whose report resolves no CUDA line says what it
        needs."""
        if self.page is None or not self.page.lines:
            return
        if not self.by_cuda and not by_cuda_line(self.page):
            self.notify(NO_CUDA_LINES, severity="warning")
            return
        self.by_cuda = not self.by_cuda
        self.hot_rank = 0
        self._fill()
        self._to_hot(0)

    def action_cursor(self, step: int) -> None:
        table = self.query_one(DataTable)
        table.move_cursor(row=table.cursor_row + step)

    def action_back(self) -> None:
        self.dismiss()
