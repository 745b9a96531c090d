"""Pick the sort column from a list (`o`): the table's columns first, then every other numeric
column, each by the title the table gives it; columns with no value in the report are not offered
(sorting by one changes nothing), and the picker says which."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from ....core.table import DESCRIPTIONS
from ...presentation.columns import EXTRA_COLUMNS, Column


def sort_choices(
    columns: list[Column], has_values: Callable[[str], bool]
) -> tuple[list[tuple[str, str]], list[str]]:
    """(column name, label) for every column with values: the table's, then the ones it shows only
    when sorted by them; and the titles of the columns left out for having none."""
    names = {c.name for c in columns}
    every = [*columns, *(c for name, c in EXTRA_COLUMNS.items() if name not in names)]
    choices = [
        (c.name, f"{c.title} · {DESCRIPTIONS.get(c.name, c.name)}")
        for c in every
        if has_values(c.name)
    ]
    return choices, [c.title for c in every if not has_values(c.name)]


# the most lines the names of columns with no values take (app.tcss: `#picker .hint`)
EMPTY_LINES = 2


def empty_note(titles: list[str], shown: int) -> str:
    """`Not listed, no values in this report (11): A, B, … +5 more`, naming the first `shown`
    titles."""
    names = [*titles[:shown], *([f"+{len(titles) - shown} more"] if shown < len(titles) else [])]
    return f"Not listed, no values in this report ({len(titles)}): {', '.join(names)}"


class SortScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="sort.cancel"),
        # the keys every list moves with (a modal held the app's `q` back: it quits here too)
        Binding("j", "move('cursor_down')", "Down", show=False, id="sort.down"),
        Binding("k", "move('cursor_up')", "Up", show=False, id="sort.up"),
        Binding("g", "move('first')", "First", show=False, id="sort.first"),
        Binding("G", "move('last')", "Last", show=False, id="sort.last"),
        Binding("q", "app.quit", "Quit", show=False, id="sort.quit"),
    ]

    def __init__(
        self, choices: list[tuple[str, str]], current: str | None, empty: list[str] | None = None
    ) -> None:
        super().__init__()
        self.choices = choices
        self.current = current
        self.empty = empty or []

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            # True because the table's cursor moves to the column picked: `s` there flips the order.
            yield Label("Sort by (enter picks, escape cancels; then s flips the order)")
            if self.empty:
                yield Label(
                    Text(empty_note(self.empty, len(self.empty))), classes="hint", id="empty"
                )
            # Text, not markup: descriptions hold brackets and the names are verbatim.
            yield OptionList(
                *(Option(Text(label), id=name) for name, label in self.choices), id="choices"
            )

    def action_move(self, how: str) -> None:
        getattr(self.query_one("#choices", OptionList), f"action_{how}")()

    def on_resize(self) -> None:
        if self.empty:
            self.call_after_refresh(self._fit_empty)

    def _fit_empty(self) -> None:
        """As many names as two lines hold at the label's width, then `+5 more`: the label keeps to
        two lines (the choices keep the room), and a name it cut would be lost without a word."""
        label = self.query_one("#empty", Label)
        width = label.content_region.width
        if width <= 0:
            return
        for shown in range(len(self.empty), -1, -1):
            text = Text(empty_note(self.empty, shown))
            if len(text.wrap(self.app.console, width)) <= EMPTY_LINES:
                break
        label.update(text)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        names = [name for name, _ in self.choices]
        options.highlighted = names.index(self.current) if self.current in names else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
