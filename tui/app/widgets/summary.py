"""The run summary above the kernel table, laid out (tui.blocks) for the terminal's width on every
resize."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from ...presentation.blocks import Block, laid_out, lines


def cut_marker(names: list[str], count: int, width: int) -> str:
    """`… not shown: notes, ceilings (5 lines); --no-tui prints all`, within `width` cells: the
    `--no-tui` pointer goes first, then names from the end (`+2`); at the least `… 5 lines not
    shown`."""
    lines_cut = f"{count} line{'s' if count > 1 else ''}"
    for shown in range(len(names), 0, -1):
        said = ", ".join(names[:shown]) + (f" +{len(names) - shown}" if shown < len(names) else "")
        for text in (
            f"… not shown: {said} ({lines_cut}); --no-tui prints all",
            f"… not shown: {said} ({lines_cut})",
        ):
            if cell_len(text) <= width:
                return text
    return f"… {lines_cut} not shown"


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
        """The summary laid out for `width` cells (also what tests read); within `height` lines, the
        last one says what did not fit: the app caps the summary's height, and a cut must not pass
        for the whole."""
        laid = laid_out(self.blocks, width)
        if height is None or len(laid) <= height:
            return Text("\n").join(line for line, _ in laid)
        keep, cut = laid[: max(height - 1, 0)], laid[max(height - 1, 0) :]
        # A block split by the cut is named too: part of it is not shown.
        names = list(dict.fromkeys(b.what for _, blocks in cut for b in blocks if b.what)) or [
            "the rest"
        ]
        marker = Block([cut_marker(names, len(cut), width)], "bold", clip=True)
        return Text("\n").join([*(line for line, _ in keep), *lines([marker], width)])

    def render(self) -> Text:
        return self.text(self.content_size.width, self.content_size.height)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(lines(self.blocks, width))
