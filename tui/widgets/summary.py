"""The run summary above the kernel table, laid out (tui.blocks) for the terminal's width on every resize."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ..blocks import Block, laid_out, lines


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

    def text(self, width: int, height: int | None = None) -> Text:
        """The summary laid out for `width` cells (also what tests read); within `height` lines, the last one
        says what did not fit: the app caps the summary's height, and a cut must not pass for the whole."""
        laid = laid_out(self.blocks, width)
        if height is None or len(laid) <= height:
            return Text("\n").join(line for line, _ in laid)
        keep, cut = laid[:max(height - 1, 0)], laid[max(height - 1, 0):]
        names = list(dict.fromkeys(b.what for _, blocks in cut for b in blocks if b.what)) or ["the rest"]
        marker = (f"… not shown: {', '.join(names)} ({len(cut)} line{'s' if len(cut) > 1 else ''}); "
                  "--no-tui prints all")
        return Text("\n").join([*(line for line, _ in keep), *lines([Block([marker], "bold", clip=True)], width)])

    def render(self) -> Text:
        return self.text(self.content_size.width, self.content_size.height)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(lines(self.blocks, width))
