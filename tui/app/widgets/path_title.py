"""A screen's title that names a file, on one line: `Runs in
/home/me/.local/share/flopscope/flopscope.db`. A path longer than the line is cut in its middle, its
start and file name kept: a title that wrapped took the table's rows at 80x24 (a store under a deep
folder took three lines)."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from ....core.common import display_text
from ...presentation.names import cut_middle


class PathTitle(Widget):
    DEFAULT_CSS = """
    PathTitle { height: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.head, self.path = "", ""

    def show(self, head: str, path: str | Path) -> None:
        """`head` (shown whole) and then `path` (escaped: a path is any bytes the user's system
        allows)."""
        self.head, self.path = display_text(head), display_text(str(path))
        self.refresh()

    def render(self) -> Text:
        room = max(1, self.content_size.width - cell_len(self.head))
        return Text(
            self.head + cut_middle(self.path, room), style="bold", no_wrap=True, overflow="crop"
        )
