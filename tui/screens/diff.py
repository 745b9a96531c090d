"""`flopscope diff A B` in the app: two runs side by side, kernel group by kernel group, largest change first."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from .. import format as fmt
from .back import can_go_back
from .export import ask_export

# (title, column of diff_runs, formatter)
COLUMNS = [
    ("Kernel", "kernel", fmt.text),
    ("N A", "count_a", fmt.integer),
    ("N B", "count_b", fmt.integer),
    ("Time A", "duration_s_a", fmt.seconds),
    ("Time B", "duration_s_b", fmt.seconds),
    ("ΔTime", "duration_s_delta", fmt.seconds),
    ("B/A", "duration_s_ratio", fmt.ratio),
    ("FLOP A", "flop_a", fmt.si),
    ("FLOP B", "flop_b", fmt.si),
    ("DRAM A", "dram_bytes_a", lambda v: fmt.si(v, "B")),
    ("DRAM B", "dram_bytes_b", lambda v: fmt.si(v, "B")),
    ("", "presence", lambda v: "" if v == "both" else fmt.text(v)),
]


class DiffScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "export", "Export"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, rows: pd.DataFrame, name_a: str, name_b: str) -> None:
        super().__init__()
        self.rows = rows
        self.names = (name_a, name_b)

    def compose(self) -> ComposeResult:
        a, b = self.names
        total_a, total_b = self.rows["duration_s_a"].sum(), self.rows["duration_s_b"].sum()
        yield Static(Text(f"A = {a} · B = {b} · kernel time {fmt.seconds(total_a)} -> {fmt.seconds(total_b)} "
                          f"({fmt.seconds(total_b - total_a)}) · {len(self.rows)} kernel group(s), largest change "
                          "first"), id="diff-title")
        yield DataTable(id="diff-table", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for title, column, _ in COLUMNS:
            table.add_column(title, key=column)
        for row in self.rows.itertuples(index=False):
            values = row._asdict()
            # Text cells: kernel names like `f<T>[with T = float]` are not markup.
            table.add_row(*(Text(render(values[column])) for _, column, render in COLUMNS))
        table.focus()

    def action_export(self) -> None:
        a, b = self.names
        ask_export(self.app, lambda: self.rows, Path.cwd() / f"diff-{a}-{b}.csv", "comparison")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return can_go_back(self)  # `flopscope diff` shows this screen alone: nothing to go back to
        return True

    def action_back(self) -> None:
        if can_go_back(self):
            self.dismiss()
