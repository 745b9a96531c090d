"""What the Kernels, Runs and Diff screens share: a KernelTable over a TableModel, with `s` to sort
by the column under the cursor, `/` to filter, escape to clear the filter, and a status line saying
what is shown.

One copy, so that the three screens cannot drift apart (they did: the Diff screen "sorted" by a
column with no values and said so in its status line, where the Kernels screen refused with a
notice)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import pandas as pd
from rich.text import Text
from textual.widgets import Static

from ....core.common import display_text
from ...presentation.columns import Column
from ...presentation.table_model import Query, TableModel, sorted_by
from ..widgets.kernel_table import KernelTable
from .back import BackScreen
from .live_filter import LiveFilter
from .own_columns import keep_choice, own_choices, own_chosen

if TYPE_CHECKING:
    from ..app import FlopscopeApp


def hidden_note(titles: list[str], room: int) -> str:
    """`hidden: GPU, Host, ID (←/→)`: the columns a narrow terminal dropped, which `left`/`right`
    bring back, shortened to `room` cells (the keys go before a name does, then names from the end:
    `hidden: GPU +2`, then `3 hidden`): as the CLI's "Hidden at 80 columns", so that no column is
    lost without a word (the run list's ID is what `open` and `diff` take)."""
    keys = " (←/→)"
    for shown in range(len(titles), 0, -1):
        more = f" +{len(titles) - shown}" if shown < len(titles) else ""
        note = f"hidden: {', '.join(titles[:shown])}{more}"
        for fitted in (note + keys, note):
            if len(fitted) <= room:
                return fitted
    short = f"{len(titles)} hidden"
    return short + keys if len(short + keys) <= room else short


class TableScreen(LiveFilter, BackScreen):
    """A screen of one KernelTable (`#status` below it). Subclasses compose the table and status,
    set `model` (None while loading) and say what a row is."""

    NOUN = "rows"  # `3/10 rows` in the status line
    NO_MATCH = "no rows match"  # `no rows match gemm · escape shows all`
    # the status line's order when no column is sorted: the model's own order
    DEFAULT_ORDER = "sort Time↓"
    # the table's name in config.toml's [columns], where `C` chooses among its own columns
    CHOOSER = ""

    def __init__(self) -> None:
        super().__init__()
        self.model: TableModel | None = None
        # The sort and filter asked for; kept apart from the model's, which drops a sort column its
        # rows lack, so that a grouping without it does not lose the sort for the next grouping.
        self.query_state = Query()

    # -- what is shown ----------------------------------------------------------------------------
    def current_row(self) -> pd.Series | None:
        """The row under the cursor, or None when no row is shown."""
        table = self.query_one(KernelTable)
        if self.model is None or table.cursor_position is None:
            return None
        return self.model.row(table.cursor_row)

    def _status(self) -> None:
        if self.model is not None:
            # the filter as typed and what a screen adds (a marked run's name) are shown, never run
            # as codes
            self.query_one("#status", Static).update(Text(display_text(self._status_text())))

    def _status_text(self) -> str:
        model = self.model
        assert model is not None  # _status writes the line only once there is a model
        query = model.query
        if query.text() and not len(model):
            return f"{self.NO_MATCH} {query.text()} · escape shows all"
        parts = [f"{len(model):,}/{model.total:,} {self.NOUN}", *self._status_extra()]
        title = next((c.title for c in model.columns if c.name == query.sort), query.sort)
        parts.append(
            f"sort {title}{'↓' if query.descending else '↑'}" if title else self.DEFAULT_ORDER
        )
        if query.text():
            parts.append(f"filter {query.text()}")
        if len(model):
            parts.append(f"row {self.query_one(KernelTable).cursor_row + 1:,}")
        text = " · ".join(parts)
        hidden = self.query_one(KernelTable).hidden_columns
        if not hidden:
            return text
        width = self._status_width()
        note = hidden_note(hidden, width - len(text) - 3)
        # `3 hidden` at least: the rest gives way (cut at its end)
        if len(text) + 3 + len(note) > width:
            text = text[: max(0, width - len(note) - 4)].rstrip() + "…"
        return f"{text} · {note}"

    def _status_width(self) -> int:
        """Cells the status line has (before its first layout: the screen's width less its
        padding)."""
        return self.query_one("#status", Static).content_region.width or self.app.size.width - 2

    def _status_extra(self) -> list[str]:
        """What the screen adds after the row count (the grouping, the marked run)."""
        return []

    def on_kernel_table_moved(self, _: KernelTable.Moved) -> None:
        self._status()

    # -- sort and filter (on the UI thread: ~10-100 ms on 100k rows) -------------------------------
    def _requery(self, query: Query, top: bool = False) -> None:
        """Apply a sort or filter; `top`: show the first rows (after a sort, the rows that now come
        first are the news)."""
        self.query_state = query
        if self.model is None:
            return
        self.query_one(KernelTable).requery(query, top=top)
        self._status()

    def action_sort_column(self) -> None:
        column = self.query_one(KernelTable).focused_column
        if column is None or self.model is None:
            return
        # sorting would reorder nothing and look like a bug
        if not self.model.has_values(column.name):
            self.notify(
                f"{column.title} has no values in these rows: nothing to sort by.",
                title="Not sorted",
                severity="warning",
                markup=False,
            )
            return
        self._requery(sorted_by(self.query_state, column), top=True)

    # -- columns: the table's own, or as chosen (`C`, kept in config.toml)
    # ---------------------------
    def _own_columns(self) -> list[Column]:
        """The table's columns as it shows them unchosen, the first what a row is (CHOOSER's
        tables)."""
        raise NotImplementedError

    def _kept_columns(self) -> list[str]:
        """Columns shown whatever the choice (they tell rows apart)."""
        return []

    def _model_for(self, columns: list[Column]) -> TableModel:
        """The rows shown with `columns` (the sort and filter kept)."""
        raise NotImplementedError

    def _chosen_columns(self) -> list[Column]:
        """The table's columns as the person chose them (the table's own without a choice)."""
        chosen = cast("FlopscopeApp", self.app).columns.get(self.CHOOSER)
        return own_chosen(self._own_columns(), chosen, self._kept_columns())

    def _show_chosen_columns(self) -> None:
        """The rows again with the chosen columns, the cursor on its row."""
        table = self.query_one(KernelTable)
        keep = table.cursor_position if self.model is not None else None
        self.model = self._model_for(self._chosen_columns())
        table.set_model(self.model, keep)
        self._status()

    def check_columns(self) -> bool:
        return bool(self.CHOOSER) and self.model is not None

    def action_choose_columns(self) -> None:
        if not self.check_columns():
            return
        assert self.model is not None  # check_columns
        own = self._own_columns()

        def chosen(keys: list[str] | None) -> None:
            if keys is not None:
                cast("FlopscopeApp", self.app).columns[self.CHOOSER] = keys
                keep_choice(self, self.CHOOSER, keys)
                self._show_chosen_columns()

        from .columns import ColumnsScreen  # when asked for: the first paint waits for this module

        shown = [c.name for c in self.model.table_columns[1:]]
        default = [c.name for c in own[1:]]
        self.app.push_screen(ColumnsScreen(own_choices(own), shown, default, own[0].title), chosen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose_columns":
            return self.check_columns()
        return super().check_action(action, parameters)
