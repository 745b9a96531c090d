"""A virtualised kernel table: draws only the lines on screen, from a `TableModel`, with no mouse
needed.

Why not a DataTable: Textual's measures every cell, and textual-fastdatatable needs every cell as a
string up front, both in time that grows with the rows. Here a frame of any size costs one `order`
array; a repaint formats the ~20-50 rows in view. Columns come from `tui.columns.fit` for the
current width and are recomputed on every resize, so nothing wraps or overlaps at 80 columns."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from ....core.common import display_text
from ...presentation.columns import Column, fit
from ...presentation.names import cut_end, distinct_cuts
from ...presentation.table_model import Query, TableModel


def fit_cell(text: str, width: int, right: bool = False) -> str:
    """Pad or cut `text` to exactly `width` cells; a cut shows one ellipsis."""
    text = cut_end(text, width)
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


class StillLoading(Static):
    """A loading label over a widget (`widget.loading = True`), placed as Textual places its own
    indicator."""

    DEFAULT_CSS = """
    StillLoading { width: 100%; height: 100%; content-align: center middle; color: $primary; }
    StillLoading.-textual-loading-indicator { layer: _loading; background: $boost; dock: top; }
    """


class KernelTable(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of a TableModel; the screen owns sorting, filtering and what `enter` does. Only its own
    keys: ScrollView's sideways paging would do nothing here (no horizontal scrolling) yet show in
    `?`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Row up", show=False, id="table.row_up"),
        Binding("down,j", "move(1)", "Row down", show=False, id="table.row_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.page_up"),
        Binding("pagedown,space", "page(1)", "Page down", show=False, id="table.page_down"),
        Binding("home", "edge(0)", "First row", show=False, id="table.first_row"),
        Binding("end", "edge(1)", "Last row", show=False, id="table.last_row"),
        Binding("left,h", "column(-1)", "Column left", show=False, id="table.column_left"),
        Binding("right,l", "column(1)", "Column right", show=False, id="table.column_right"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "kernel-table--header",
        "kernel-table--cursor",
        "kernel-table--cursor-cell",
    }
    DEFAULT_CSS = """
    KernelTable { height: 1fr; overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1; }
    KernelTable > .kernel-table--header { text-style: bold; }
    KernelTable > .kernel-table--cursor { text-style: reverse; }
    KernelTable > .kernel-table--cursor-cell { text-style: reverse bold underline; }
    KernelTable:blur > .kernel-table--cursor-cell { text-style: reverse; }
    """

    class Moved(Message):
        """The cursor moved (row or column), or the columns shown changed; the screen updates its
        status line (which names the columns hidden)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: TableModel | None = None
        self.cursor_row = 0
        self.cursor_col = 0
        # (model column, column, cells wide)
        self.layout_columns: list[tuple[int, Column, int]] = []
        self._fitted_width = -1
        # the column the cursor moved to: kept when the table is refitted
        self._focus: str | None = None
        # Per model column of text, each value's cell at the column's width: cut so that different
        # values stay different (kernel names; `batch_size=16` and `=1024`, which an end cut shows
        # alike as `batch_size=1…`)
        self._cuts: dict[int, dict[str, str]] = {}
        self._cut_for: tuple | None = None

    def get_loading_widget(self) -> Widget:
        """What covers the table while the report is read or grouped: a still label. Textual's
        animated indicator redraws 16 times a second, and each frame takes the GIL from the read in
        the worker beside it, slowing it; the status line below says how
        far the read has got."""
        return StillLoading("loading …")

    # -- data ------------------------------------------------------------------------------------
    def set_model(self, model: TableModel, keep_position: int | None = None) -> None:
        """Show `model`; the cursor stays on the frame row `keep_position` when it is still
        shown."""
        focused_name = self.focused_column.name if self.focused_column else None
        self._focus = focused_name if focused_name in {c.name for c in model.columns} else None
        self.model = model
        found = model.index_of(keep_position) if keep_position is not None else None
        self.cursor_row = found or 0
        self._fit_columns()  # puts the cursor on the focused column when the new model has it
        if self._focus is None:
            self.cursor_col = 0
        self._refresh_size()
        self._scroll_to_cursor(center=found is not None)
        self.refresh()

    def requery(self, query: Query, top: bool = False) -> None:
        """Apply a new sort/filter to the model shown; the cursor stays on its row if that row is
        still shown, or goes to the first row (`top`: after a sort, the rows that now come first are
        the news)."""
        keep = None if top else self.cursor_position
        model = self.model
        assert model is not None  # a screen requeries only the table it gave a model
        model.apply(query)
        self.set_model(model, keep)

    def focus_column(self, name: str) -> None:
        """Put the cursor on the model's column `name` (brought on screen if a narrow terminal
        dropped it)."""
        if self.model is not None and name in {c.name for c in self.model.columns}:
            self._focus = name
            self._fit_columns()
            self.refresh()
            self.post_message(self.Moved())

    @property
    def focused_column(self) -> Column | None:
        if not self.layout_columns:
            return None
        return self.layout_columns[min(self.cursor_col, len(self.layout_columns) - 1)][1]

    @property
    def hidden_columns(self) -> list[str]:
        """Titles of the model's columns that did not fit, in the model's order; a column with no
        value is not named (it would show blanks)."""
        if self.model is None:
            return []
        shown = {c.name for _, c, _ in self.layout_columns}
        return [
            c.title
            for c in self.model.columns
            if c.name not in shown and self.model.has_values(c.name)
        ]

    @property
    def cursor_position(self) -> int | None:
        """Frame position of the row under the cursor, or None when no row is shown."""
        if self.model is None or not len(self.model):
            return None
        return self.model.position(self.cursor_row)

    # -- geometry --------------------------------------------------------------------------------
    @property
    def _width(self) -> int:
        return self.scrollable_content_region.width

    @property
    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)  # minus the header line

    def _fit_columns(self) -> None:
        if self.model is None:
            return
        self._fitted_width = self._width
        model = self.model
        natural = {c.name: model.natural_width(c) for c in model.columns}
        # Text columns ask for no more than their longest value (never more than their set width: a
        # long parameter list must not push numbers off); what the numbers leave widens them up to
        # their longest value, the name column (the first text one) first. Whole numbers get their
        # width: never cut.
        stretch = next((c for c in model.columns if not c.numeric), None)
        sizes = {
            c.name: min(c.width, natural[c.name]) if not c.numeric else natural[c.name]
            for c in model.columns
        }
        blank = {c.name for c in model.columns if not model.has_values(c.name)}
        keep = {name for name in (model.query.sort, self._focus) if name is not None}
        chosen = fit(model.columns, self._width, keep=keep, widths=sizes, blank=blank)
        # Names that would be cut get the room of the columns without a value first (those say
        # nothing).
        wanted = (
            sum(sizes[c.name] + 1 for c in chosen)
            - 1
            + (natural[stretch.name] - sizes[stretch.name] if stretch else 0)
        )
        if stretch in chosen and wanted > self._width:
            chosen = [c for c in chosen if c.name not in blank or c.name in keep]
        spare = max(0, self._width - sum(sizes[c.name] + 1 for c in chosen) + 1)
        cells = {c.name: sizes[c.name] for c in chosen}
        _shrink_text(chosen, cells, self._width)
        # the name first
        for c in sorted((c for c in chosen if not c.numeric), key=lambda c: c is not stretch):
            grow = min(spare, max(0, natural[c.name] - cells[c.name]))
            cells[c.name] += grow
            spare -= grow
        before = [c.name for _, c, _ in self.layout_columns]
        self.layout_columns = [(model.columns.index(c), c, cells[c.name]) for c in chosen]
        # a resize or a scrollbar: the status line's `hidden:` changes
        if [c.name for c in chosen] != before:
            self.post_message(self.Moved())
        names = [c.name for c in chosen]
        self.cursor_col = (
            names.index(self._focus)
            if self._focus in names
            else min(self.cursor_col, max(0, len(self.layout_columns) - 1))
        )
        self._cut_texts()

    def shown_text(self, column: str, text: str) -> str:
        """How the cell `text` of the text column named `column` shows at its width (cut, or
        whole)."""
        assert self.model is not None
        at = next((i for i, c in enumerate(self.model.columns) if c.name == column), -1)
        return self._cuts.get(at, {}).get(text) or display_text(text)

    def _cut_texts(self) -> None:
        """How each text column's values show at its width: cut so that different values stay
        different."""
        model = self.model
        assert model is not None  # called by _fit_columns, which has a model
        key = (
            model,
            tuple((c.name, cells) for _, c, cells in self.layout_columns if not c.numeric),
        )
        if key == self._cut_for:  # the model itself, not its id(): ids are reused
            return
        self._cuts = {}
        for at, column, cells in self.layout_columns:
            if not column.numeric:
                shown = {text: display_text(text) for text in model.texts(column)}
                cuts = distinct_cuts(shown.values(), cells)
                self._cuts[at] = {text: cuts[safe] for text, safe in shown.items() if safe in cuts}
        self._cut_for = key

    def _refresh_size(self) -> None:
        rows = len(self.model) if self.model is not None else 0
        self.virtual_size = Size(self._width, rows + 1)

    def on_resize(self, event: Resize) -> None:
        self._fit_columns()
        self._refresh_size()
        self._scroll_to_cursor()
        self.refresh()

    # -- cursor ----------------------------------------------------------------------------------
    def _move_to(self, row: int) -> None:
        if self.model is None or not len(self.model):
            return
        row = max(0, min(row, len(self.model) - 1))
        if row == self.cursor_row:
            return
        old, self.cursor_row = self.cursor_row, row
        if not self._scroll_to_cursor():
            # Only the two lines that changed: a cursor step repaints 2 lines, not the table.
            for index in (old, row):
                self.refresh(Region(0, index - int(self.scroll_offset.y) + 1, self.size.width, 1))
        self.post_message(self.Moved())

    def _scroll_to_cursor(self, center: bool = False) -> bool:
        """Scroll so the cursor row is visible; True when the view moved."""
        top = int(self.scroll_offset.y)
        if center:
            target = max(0, self.cursor_row - self._page // 2)
        elif self.cursor_row < top:
            target = self.cursor_row
        elif self.cursor_row >= top + self._page:
            target = self.cursor_row - self._page + 1
        else:
            return False
        self.scroll_to(y=target, animate=False, immediate=True)
        self.refresh()
        return True

    def action_move(self, step: int) -> None:
        self._move_to(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self._move_to(self.cursor_row + step * self._page)

    def action_edge(self, end: int) -> None:
        self._move_to(len(self.model) - 1 if end and self.model is not None else 0)

    def action_column(self, step: int) -> None:
        """Move to the next column of the model, shown or not: one a narrow terminal dropped comes
        back in place of another, so every column can be read (and sorted by) at 80 columns."""
        if self.model is None or self.focused_column is None:
            return
        names = [c.name for c in self.model.columns]
        at = names.index(self.focused_column.name)
        self._focus = names[max(0, min(at + step, len(names) - 1))]
        self._fit_columns()
        self.refresh()
        self.post_message(self.Moved())

    # -- drawing ---------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.model is None:
            return Strip.blank(width, self.rich_style)
        if self._fitted_width != self._width:  # a scrollbar came or went: no Resize event for that
            self._fit_columns()
        if y == 0:
            return self._header_line(width)
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self.model):
            return Strip.blank(width, self.rich_style)
        return self._row_line(index, width)

    def _header_line(self, width: int) -> Strip:
        base = self.rich_style + self.get_component_rich_style("kernel-table--header")
        query = self.model.query if self.model is not None else None
        segments = []
        for i, (_, column, cells) in enumerate(self.layout_columns):
            title = column.title
            if query is not None and query.sort == column.name:
                title += "↓" if query.descending else "↑"
            style = base + Style(underline=True) if i == self.cursor_col else base
            segments.append(Segment(fit_cell(title, cells, right=column.numeric), style))
            segments.append(Segment(" ", base))
        return Strip(segments[:-1]).adjust_cell_length(width, base)

    def _row_line(self, index: int, width: int) -> Strip:
        assert self.model is not None  # called by render_line, which has a model
        base = self.rich_style
        why = self.model.not_profiled(index)
        if why is not None:  # no values: the row is dim and says why instead of showing blank cells
            base = base + Style(dim=True)
        plain = base
        on_cursor = index == self.cursor_row
        if on_cursor:
            base = base + self.get_component_rich_style("kernel-table--cursor")
        cell_style = (
            self.get_component_rich_style("kernel-table--cursor-cell") if on_cursor else None
        )
        texts = self.model.cells(index)
        # Text from the report (names, paths) as display_text shows it: an ESC or a newline in a
        # name can neither drive the terminal nor break the line.
        cells = [
            (
                (
                    texts[at]
                    if column.numeric
                    else self._cuts.get(at, {}).get(texts[at]) or display_text(texts[at])
                ),
                size,
                column.numeric,
                1,
            )
            for at, column, size in self.layout_columns
        ]
        if why is not None:
            cells = _merge_blank_tail(cells, why)
        segments, col = [], 0
        for text, size, right, span in cells:
            on = cell_style is not None and col <= self.cursor_col < col + span
            segments.append(
                Segment(fit_cell(text, size, right=right), plain + cell_style if on else base)
            )
            segments.append(Segment(" ", base))
            col += span
        return Strip(segments[:-1]).adjust_cell_length(width, base)

    def visible_text(self) -> list[str]:
        """The lines on screen as plain text (header first): for tests and the benchmark."""
        return [self.render_line(y).text for y in range(self.scrollable_content_region.height)]


def _shrink_text(chosen: list[Column], cells: dict[str, int], width: int) -> None:
    """Where the columns no drop can remove (priority 0, the sort's, the cursor's) still overflow
    `width`, the text ones give up cells, rightmost first, down to their title's: a cut reason or
    name still reads, a number cut at the screen's edge (`2` for `202 M`) lies."""
    over = sum(cells[c.name] + 1 for c in chosen) - 1 - width
    for c in reversed([c for c in chosen if not c.numeric]):
        give = max(0, min(over, cells[c.name] - len(c.title) - 1))
        cells[c.name] -= give
        over -= give


def _merge_blank_tail(
    cells: list[tuple[str, int, bool, int]], why: str
) -> list[tuple[str, int, bool, int]]:
    """The blank cells at the end of a row (after its name and ID) as one cell that says why they
    are blank."""
    start = len(cells)
    while start > 1 and not cells[start - 1][0].strip():
        start -= 1
    if start == len(cells):
        return cells
    size = sum(c[1] for c in cells[start:]) + len(cells) - start - 1  # the gaps between them too
    return [*cells[:start], (why, size, False, len(cells) - start)]
