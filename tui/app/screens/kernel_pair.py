"""The diff's `enter` on a group both runs ran: the Kernel screen's sections of run A and run B side
by side, one line per metric, the B value bold where it differs from A's, and its change B - A (with
% of A) beside it."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pandas as pd
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ....core.common import display_text
from ...presentation import format as fmt
from ...presentation.diff_text import change
from ...presentation.kernel_sections import sections
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from .export import ask_export
from .keys import BACK, EXPORT


def paired(a: pd.Series, b: pd.Series) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(section, [(label, A's value, B's value)]): each section's labels in A's order, then any only
    B has (a tensor type only one run used); a label one run lacks reads blank there."""
    out = []
    for (title, items_a), (_, items_b) in zip(sections(a), sections(b), strict=True):
        values_a, values_b = dict(items_a), dict(items_b)
        labels = list(dict.fromkeys([*values_a, *values_b]))
        out.append(
            (title, [(label, values_a.get(label, ""), values_b.get(label, "")) for label in labels])
        )
    return out


class KernelPairScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        EXPORT,
        Binding("j", "scroll('down')", "Scroll down", show=False, id="kernelpair.scroll_down"),
        Binding("k", "scroll('up')", "Scroll up", show=False, id="kernelpair.scroll_up"),
        Binding("space", "scroll('page_down')", "Page down", show=False, id="kernelpair.page_down"),
    ]

    def __init__(
        self, a: pd.Series, b: pd.Series, names: tuple[str, str], name_column: str = "kernel"
    ) -> None:
        super().__init__()
        self.rows, self.names = (a, b), names
        self.title_text = fmt.text(b.get(name_column)) or fmt.text(b.get("kernel")) or "(unnamed)"

    @property
    def crumbs(self) -> list[str]:
        return [f"A {self.names[0]} vs B {self.names[1]}", self.title_text]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="kernel-title")
        with VerticalScroll(id="pair-body"):
            yield Static(self._table())
        yield KeyFooter()

    def _table(self) -> Table:
        table = Table(box=None, pad_edge=False, expand=True)
        table.add_column("", no_wrap=True, style="dim")
        for side, name in zip("AB", self.names, strict=True):
            table.add_column(
                Text(display_text(f"{side}: {name}"), style="bold"), overflow="fold", ratio=1
            )
        table.add_column(Text("Δ B - A", style="bold"), no_wrap=True)
        for title, items in paired(*self.rows):
            table.add_row(Text(title, style="bold"), "", "", "")
            for label, a, b in items:
                table.add_row(
                    Text(label),
                    Text(display_text(a)),
                    Text(display_text(b), style="bold" if a != b else ""),
                    Text(change(label, *self.rows)),
                )
            table.add_row("", "", "", "")
        return table

    def on_mount(self) -> None:
        self.query_one("#pair-body").focus()

    def action_back(self) -> None:
        self.dismiss()

    def action_scroll(self, how: str) -> None:
        body = self.query_one("#pair-body", VerticalScroll)
        {"down": body.scroll_down, "up": body.scroll_up, "page_down": body.scroll_page_down}[how](
            animate=False
        )

    async def action_export(self) -> None:
        # Both rows, every column at full precision, each named by its run.
        frame = pd.DataFrame([self.rows[0], self.rows[1]]).reset_index(drop=True)
        frame.insert(0, "run", list(self.names))
        await ask_export(
            self.app, lambda: frame, Path.cwd() / "kernel-a-vs-b.csv", what="A and B of this group"
        )
