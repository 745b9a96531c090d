"""Plain tables for the CLI (rich, no pandas): what `flopscope gpus`, `runs` and every kernel table
print through, light enough that `gpus` starts without the engine's data stack."""

from __future__ import annotations

import io
import shutil
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from ...core.common import display_text
from .columns import drop
from .names import cut_end, distinct_cuts


def console(record: bool = False) -> Console:
    """Rich console for the CLI tables; piped output keeps a wide table instead of rich's 80-column
    default. `record`: kept for a picture (`save_svg`/`save_html`), not printed."""
    width = shutil.get_terminal_size((160, 24)).columns
    if record:
        return Console(
            highlight=False, width=width, record=True, file=io.StringIO(), force_terminal=True
        )
    return Console(highlight=False, width=width)


@dataclass(frozen=True)
class Spec:
    """One column of a printed table."""

    title: str
    numeric: bool = True  # right-aligned, and never cut: the column drops whole instead
    priority: int = 0  # higher drops first when the terminal is narrow; 0 never drops
    pair: str = ""  # columns with the same pair drop together (A and B of a comparison)


_GAP = 2  # spaces between columns


@dataclass(frozen=True)
class TextTable:
    """A table of text cells in columns of known widths, printed as lines: titles (bold), then a
    line a row. Not rich's Table: it measures, wraps and pads each cell again, though
    `fitted_table` has already given every column its width and cut what does not fit."""

    titles: list[str]
    widths: list[int]
    right: list[bool]  # right-aligned (numbers)
    rows: list[list[str]]

    def column(self, title: str) -> list[str]:
        """The cells of the column titled `title`, as laid out (a cut name with its ellipsis)."""
        k = self.titles.index(title)
        return [row[k] for row in self.rows]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.titles:
            return
        yield Segment(self._line(self.titles), Style(bold=True))
        yield Segment.line()
        for row in self.rows:
            yield Segment(self._line(row))
            yield Segment.line()

    def _line(self, cells: list[str]) -> str:
        return (" " * _GAP).join(
            _placed(c, w, r) for c, w, r in zip(cells, self.widths, self.right, strict=True)
        )


def _placed(cell: str, width: int, right: bool) -> str:
    if cell_len(cell) > width:  # a title wider than its cut column
        text = Text(cell)
        text.truncate(width, overflow="ellipsis")
        cell = text.plain
    pad = " " * (width - cell_len(cell))
    return pad + cell if right else cell + pad


def fitted_table(
    specs: list[Spec],
    rows: list[list[str]],
    width: int,
    flex: int | None = 0,
    flex_min: int | None = None,
    distinct: bool = True,
) -> tuple[TextTable, list[str]]:
    """A table of `rows` (cells already text) no wider than `width`, and the titles of the columns
    dropped.

    Every column gets the width of its longest cell, except `flex` (the name), which takes what is
    left and is ellipsized: rich would otherwise squeeze every column, numbers included, to fit a
    long C++ name. Every table the CLI prints passes here: every cell shows control characters as
    escapes (`\x1b`), so no cell can drive the terminal or break a row in two. Text cells (names,
    paths from a report) are where they come from, but a numeric column's cells are text too, and
    some callers fill them from stored values; a printable cell (every number flopscope formats)
    costs display_text one `isprintable` check."""
    rows = [[display_text(c) for c in row] for row in rows]
    natural = [
        max([cell_len(s.title), *(cell_len(r[i]) for r in rows)]) for i, s in enumerate(specs)
    ]
    blank = [not any(r[i] for r in rows) for i in range(len(specs))]
    if flex is not None and flex_min is None:
        flex_min = min(natural[flex], max(16, width * 2 // 5))
    keep = _fit(specs, natural, blank, width, flex, flex_min or 0)
    spare = width - sum(natural[i] for i in keep if i != flex) - _GAP * (len(keep) - 1)
    # the names would be cut: blank columns give them their room first
    if flex in keep and spare < natural[flex]:
        keep = [i for i in keep if i == flex or not blank[i]]
        spare = width - sum(natural[i] for i in keep if i != flex) - _GAP * (len(keep) - 1)
    sizes = [max(min(natural[i], spare), 1) if i == flex else natural[i] for i in range(len(specs))]
    if flex in keep and spare < natural[flex]:
        # Cut here: names that differ stay different, and `k<…>` gets no second ellipsis.
        cuts = distinct_cuts((r[flex] for r in rows), max(spare, 1)) if distinct else {}
        if not distinct:  # a link or a path reads from its start: cut at its end
            cuts = {r[flex]: cut_end(r[flex], max(spare, 1)) for r in rows}
        rows = [[cuts.get(c, c) if i == flex else c for i, c in enumerate(r)] for r in rows]
    table = TextTable(
        [specs[i].title for i in keep],
        [sizes[i] for i in keep],
        [specs[i].numeric for i in keep],
        [[row[i] for i in keep] for row in rows],
    )
    hidden = [
        specs[i].pair or specs[i].title for i in range(len(specs)) if i not in keep and not blank[i]
    ]
    return table, list(dict.fromkeys(hidden))


def _fit(
    specs: list[Spec],
    natural: list[int],
    blank: list[bool],
    width: int,
    flex: int | None,
    flex_min: int,
) -> list[int]:
    """Indexes of the columns kept, dropped in the app's order (`columns.drop`) until the name has
    `flex_min` cells."""
    sizes = [flex_min if i == flex else natural[i] for i in range(len(specs))]
    return drop(
        [s.priority for s in specs],
        sizes,
        width,
        gap=_GAP,
        blank={i for i, b in enumerate(blank) if b},
        pairs=[s.pair for s in specs],
    )


def print_hidden(console: Console, hidden: list[str]) -> None:
    """Say which columns a narrow terminal hid, so a missing column is never mistaken for missing
    data."""
    if hidden:
        console.print(
            Text(
                f"Hidden at {console.width} columns: {', '.join(hidden)}; widen or use --json",
                style="dim",
            )
        )
