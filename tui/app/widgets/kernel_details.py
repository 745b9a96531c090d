"""The selected row's metrics beside the kernel table on a wide terminal (the list + details split):
the Kernel screen's sections, without its roofline plot, redrawn as the cursor moves."""

from __future__ import annotations

import pandas as pd
from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ....core.common import display_text
from ...presentation.kernel_sections import sections
from ...presentation.section_lines import SectionLines
from .rendered_once import RenderedOnce

SPLIT = 120  # from this many columns the Kernels screen shows the details beside the table
# The cells the table keeps beside them: its key columns (Time, %Time, FLOP/s, %Roof, Bound) fit, as
# at 80x24.
TABLE_KEEPS = 80


def details_width(width: int) -> int:
    """The details' columns on a `width`-column terminal: 40% of it, but never so many that the
    table has under TABLE_KEEPS cells and loses its key columns (at 120 columns the details get 40,
    the table 80)."""
    return min(width * 2 // 5, width - TABLE_KEEPS)


class KernelDetails(VerticalScroll, can_focus=False):
    """Read-only: the keys stay with the table; `enter` opens the full Kernel screen (with its
    roofline)."""

    DEFAULT_CSS = """
    KernelDetails { height: 1fr; padding: 0 1; border-left: vkey $panel; }
    """

    def fit(self, width: int) -> bool:
        """Shown beside the table from SPLIT columns on, `details_width` wide; whether that
        changed."""
        was = self.display
        self.display = width >= SPLIT
        self.styles.width = max(details_width(width), 0)
        return self.display != was

    def compose(self):
        yield Static(Text("no row selected", style="dim"), id="details-body")

    def show(
        self, row: pd.Series | None, name: str = "", launches: pd.DataFrame | None = None
    ) -> None:
        """`row`'s sections under `name` (the row's name as the table shows it); None: no row is
        shown. `launches`: its report's, whose earlier launches the re-profile advice for an
        unprofiled launch skips."""
        body = self.query_one("#details-body", Static)
        if row is None:
            body.update(Text("no row selected", style="dim"))
            return
        # The name first, on one line (the Kernel section at the end has it whole), then each
        # section.
        parts: list = [
            Text(display_text(name), style="bold", no_wrap=True, overflow="ellipsis"),
            Text(),
        ]
        for title, items in sections(row, launches):
            parts += [SectionLines(title, items), Text()]  # section_table's lines, drawn quicker
        # laid out and drawn from one rendering (a dozen tables: most of a cursor step's frame)
        body.update(RenderedOnce(Group(*parts)))
        self.scroll_home(animate=False)
