"""The column chooser (`C` on the Kernels, Runs, Diff and Reconcile tables): the columns the table
can show, with unit and meaning; `space` shows or hides the one under the cursor, `K`/`J` (or
shift+up/down) move it, `r` puts back the table's own, `j`/`k`/`g`/`G` move the cursor as in every
list, `enter` takes the choice (the screen saves it, column_choice.py), `escape` drops it. The list
opens with the shown columns first, in their order, the hidden ones after them in the canonical
order; showing or hiding moves nothing, and the table shows the ticked ones in the list's order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class Choice:
    key: str  # the --json key
    title: str  # as the table titles it
    unit: str
    description: str


class ColumnsScreen(ModalScreen[list[str] | None]):
    """Dismisses with the keys shown, in order (None: cancelled)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "show_hide", "Show/hide", id="columns.toggle"),
        Binding("K,shift+up", "move(-1)", "Move up", id="columns.move_up"),
        Binding("J,shift+down", "move(1)", "Move down", id="columns.move_down"),
        Binding("r", "reset", "Table's own", id="columns.reset"),
        Binding("escape", "cancel", "Cancel", id="columns.cancel"),
        # The keys every list here moves with (OptionList has the arrows, page keys, home and end),
        # and `q`, which a modal would otherwise hold back from the app.
        Binding("j", "move_cursor('cursor_down')", "Down", show=False, id="columns.down"),
        Binding("k", "move_cursor('cursor_up')", "Up", show=False, id="columns.up"),
        Binding("g", "move_cursor('first')", "First", show=False, id="columns.first"),
        Binding("G", "move_cursor('last')", "Last", show=False, id="columns.last"),
        Binding("q", "app.quit", "Quit", show=False, id="columns.quit"),
    ]

    def __init__(
        self, choices: list[Choice], shown: list[str], default: list[str], first: str
    ) -> None:
        super().__init__()
        self.choices = {c.key: c for c in choices}
        self.default = [k for k in default if k in self.choices]
        self.first = first  # the name column: always first, not in the list
        self._arrange(shown)

    def _arrange(self, shown: list[str]) -> None:
        self.shown = {k for k in shown if k in self.choices}
        self.order = [
            *(k for k in shown if k in self.choices),
            *(k for k in self.choices if k not in self.shown),
        ]

    @property
    def chosen(self) -> list[str]:
        """The keys ticked, in the list's order."""
        return [k for k in self.order if k in self.shown]

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Label(
                f"Columns after {self.first} (space show/hide · K/J move · r the table's own ·"
                " enter OK)"
            )
            yield OptionList(*self._options(), id="choices")

    def _options(self) -> list[Option]:
        width = min(max(len(c.title) for c in self.choices.values()), 16)
        # the picker less its borders, padding and scrollbar
        room = min(self.app.size.width * 9 // 10, 100) - 13
        return [self._option(self.choices[k], width, room) for k in self.order]

    def _option(self, choice: Choice, width: int, room: int) -> Option:
        # Text, not markup: descriptions hold brackets. One line each: the description is cut to
        # fit.
        ticked = choice.key in self.shown
        unit = f"[{choice.unit}]" if choice.unit else ""
        line = Text(
            f"{'✓' if ticked else ' '} {choice.title[:width]:<{width}} {unit:<9}",
            style="bold" if ticked else "",
        )
        line.append(
            f"{choice.key} · {choice.description}" if choice.description else choice.key,
            style="dim",
        )
        line.truncate(max(room, 20), overflow="ellipsis")
        return Option(line, id=choice.key)

    def _redraw(self, at: int) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())
        options.highlighted = at

    @property
    def cursor(self) -> int | None:
        return self.query_one(OptionList).highlighted

    def on_mount(self) -> None:
        self.styles.align = ("center", "middle")

    def action_show_hide(self) -> None:
        at = self.cursor
        if at is not None:
            self.shown ^= {self.order[at]}
            self._redraw(at)

    def action_move(self, step: int) -> None:
        """Move the column under the cursor up or down the list (the table's order is the
        list's)."""
        at = self.cursor
        if at is None or not 0 <= at + step < len(self.order):
            return
        self.order[at], self.order[at + step] = self.order[at + step], self.order[at]
        self._redraw(at + step)

    def action_reset(self) -> None:
        self._arrange(self.default)
        self._redraw(0)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # enter: the choice is made
        self.dismiss(self.chosen)

    def action_move_cursor(self, how: str) -> None:
        getattr(self.query_one(OptionList), f"action_{how}")()

    def action_cancel(self) -> None:
        self.dismiss(None)
