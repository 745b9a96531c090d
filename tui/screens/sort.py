"""Pick the sort column from a list (`o`): the table's columns first, then every other numeric column."""

from __future__ import annotations

from typing import ClassVar

from flopscope.core.columns import ALL, DESCRIPTIONS, UNITS
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from ..columns import Column


def sort_choices(columns: list[Column], available: set[str]) -> list[tuple[str, str]]:
    """(column name, label) for every column the rows hold: the shown ones by title, then the rest."""
    shown = [(c.name, f"{c.title} · {DESCRIPTIONS.get(c.name, c.name)}") for c in columns if c.name in available]
    names = {n for n, _ in shown}
    rest = [(n, f"{n} · {DESCRIPTIONS[n]}") for n, unit, _ in ALL
            if unit and n not in names and n in available and n in UNITS]
    return shown + rest


class SortScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, choices: list[tuple[str, str]], current: str | None) -> None:
        super().__init__()
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Label("Sort by (enter picks, escape cancels; s flips the order later)")
            # Text, not markup: descriptions hold brackets and the names are verbatim.
            yield OptionList(*(Option(Text(label), id=name) for name, label in self.choices), id="choices")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        names = [name for name, _ in self.choices]
        options.highlighted = names.index(self.current) if self.current in names else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
