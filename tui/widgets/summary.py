"""The run summary above the kernel table, laid out (tui.blocks) for the terminal's width on every resize."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ..blocks import Block, lines


class Summary(Widget):
    DEFAULT_CSS = """
    Summary { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.blocks: list[Block] = []

    def show(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        self.refresh(layout=True)

    def text(self, width: int) -> Text:
        """The summary laid out for `width` cells (also what tests read)."""
        return Text("\n").join(lines(self.blocks, width))

    def render(self) -> Text:
        return self.text(self.content_size.width)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(lines(self.blocks, width))
