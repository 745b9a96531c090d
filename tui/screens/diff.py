"""`flopscope diff A B` in the app: two runs side by side, kernel group by kernel group, largest change first.

At 80 columns the times come right after the kernel name, whose column is capped (names ellipsized; the
export keeps them whole) and stays put while the rest scrolls sideways.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pandas as pd
from flopscope.core.diff import side_total
from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widgets import DataTable, Footer, Static

from .. import format as fmt
from .back import BackScreen
from .export import ask_export

# (title, column of diff_runs, formatter); the first ones after the name are what must fit at 80 columns.
COLUMNS = [
    ("Kernel", "kernel", fmt.text),
    ("Time A", "duration_s_a", fmt.seconds),
    ("Time B", "duration_s_b", fmt.seconds),
    ("ΔTime", "duration_s_delta", fmt.seconds),
    ("B/A", "duration_s_ratio", fmt.ratio),
    ("", "presence", lambda v: "" if v == "both" else fmt.text(v)),
    ("N A", "count_a", fmt.integer),
    ("N B", "count_b", fmt.integer),
    ("FLOP A", "flop_a", fmt.si),
    ("FLOP B", "flop_b", fmt.si),
    ("DRAM A", "dram_bytes_a", lambda v: fmt.si(v, "B")),
    ("DRAM B", "dram_bytes_b", lambda v: fmt.si(v, "B")),
]
MUST_FIT = 5  # columns after the name kept on screen beside it: times, change, ratio, presence
MIN_NAME = 16  # narrower than this a name says nothing; the numbers scroll instead
PADDING = 2  # DataTable's cell padding, one cell each side
SCROLLBAR = 2  # the table's vertical scrollbar


def name_width(cells: list[list[str]], total: int) -> int:
    """Cells for the kernel column: as wide as its longest name, but leaving room in `total` columns for the
    MUST_FIT columns after it (each as wide as its widest cell or title)."""
    lines = [[title for title, _, _ in COLUMNS], *cells]
    widths = [max(cell_len(c) for c in column) for column in zip(*lines, strict=True)]
    numbers = sum(w + PADDING for w in widths[1:1 + MUST_FIT])
    room = total - SCROLLBAR - numbers - PADDING
    return max(min(widths[0], room), MIN_NAME)


def gpu_lines(names: tuple[str, str], gpus: tuple[str | None, str | None]) -> list[str]:
    """`A = name (GPU) · B = name (GPU)`, and a warning when the two ran on different GPUs."""
    (a, b), (gpu_a, gpu_b) = names, gpus
    lines = [f"A = {a} ({gpu_a or 'GPU unknown'}) · B = {b} ({gpu_b or 'GPU unknown'})"]
    if gpu_a and gpu_b and gpu_a != gpu_b:
        lines.append(f"! different GPUs ({gpu_a} vs {gpu_b}): time changes include the hardware, not only the "
                     "code")
    return lines


class DiffScreen(BackScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "export", "Export", priority=True),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, rows: pd.DataFrame, name_a: str, name_b: str,
                 gpus: tuple[str | None, str | None] = (None, None)) -> None:
        """`rows` from `core.diff.diff_runs`; `gpus`: the GPU each run was profiled on (None: not known)."""
        super().__init__()
        self.rows = rows
        self.names = (name_a, name_b)
        self.gpus = gpus
        self.cells = [[render(values[column]) for _, column, render in COLUMNS]
                      for values in (r._asdict() for r in rows.itertuples(index=False))]
        self._name_width = 0

    def compose(self) -> ComposeResult:
        total_a, total_b = (side_total(self.rows, "duration_s", side) for side in "ab")
        lines = gpu_lines(self.names, self.gpus)
        text = Text(lines[0])
        for warning in lines[1:]:
            text.append("\n" + warning, style="bold")  # bold, not colour only: legible over SSH and NO_COLOR
        text.append(f"\nkernel time {fmt.seconds(total_a) or 'n/a'} -> {fmt.seconds(total_b) or 'n/a'} "
                    f"({fmt.seconds(total_b - total_a) or 'n/a'}) · {len(self.rows)} kernel group(s), largest change "
                    "first")
        yield Static(text, id="diff-title")
        # The name column stays put while the numbers scroll sideways.
        yield DataTable(id="diff-table", cursor_type="row", zebra_stripes=True, fixed_columns=1)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._fill(self.app.size.width)
        self.query_one(DataTable).focus()

    def on_resize(self, event: Resize) -> None:
        if name_width(self.cells, event.size.width) != self._name_width:
            self._fill(event.size.width)

    def _fill(self, total: int) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear(columns=True)
        self._name_width = name_width(self.cells, total)
        for i, (title, column, _) in enumerate(COLUMNS):
            table.add_column(title, key=column, width=self._name_width if i == 0 else None)
        for row in self.cells:
            # Text cells: kernel names like `f<T>[with T = float]` are not markup. The name is cut with an
            # ellipsis where it meets the column's edge; str() of the cell is still the whole name.
            table.add_row(Text(row[0], no_wrap=True, overflow="ellipsis"), *(Text(c) for c in row[1:]))
        if self.cells:
            table.move_cursor(row=min(keep, len(self.rows) - 1))

    async def action_export(self) -> None:
        a, b = self.names
        await ask_export(self.app, lambda: self.rows, Path.cwd() / f"diff-{a}-{b}.csv", "comparison")
