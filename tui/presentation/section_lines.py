"""A section of label/value rows drawn as `kernel_sections.section_table` draws it, without rich's
table machinery where every row fits on its line: the details pane beside the kernel table draws a
dozen sections on each cursor step, and rich measures, pads and wraps each cell as a renderable of
its own (~20 ms a pane on this 2-core machine, most of a key's frame on a big table)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from ...core.common import display_text
from .kernel_sections import section_table

_GAP = 2  # the first column's right padding and the second's left: rich's (0, 1), no outer edge
_LEAST = 4  # narrower value columns are left to rich (its last-resort shrinking of both)


class SectionLines:
    """`section_table(title, items)`, drawn line by line: a value wider than the room rich's table
    leaves it is folded by rich's own `Text.wrap`, as the table folds it. Cells of other than plain
    printable text are left to the table itself."""

    def __init__(self, title: str, items: list[tuple[str, str]]) -> None:
        self.title = title
        self.items = [(label, display_text(value)) for label, value in items]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        labels = max((cell_len(label) for label, _ in self.items), default=0)
        values = max((cell_len(value) for _, value in self.items), default=0)
        # the room rich's table gives the values: their widest, or what the labels leave of the
        # width (the label column never wraps)
        room = min(values, options.max_width - labels - _GAP)
        plain_text = all(t.isprintable() for item in self.items for t in item)
        if not (plain_text and labels and values and room >= _LEAST):
            yield from console.render(section_table(self.title, self.items), options)
            return
        if self.title:  # left-justified over the table's width, wrapped by rich if wider
            yield from console.render(
                Text(self.title, style="bold"),
                options.update(
                    width=labels + _GAP + room, justify="left", height=None, highlight=False
                ),
            )
        dim, plain, newline = console.get_style("dim"), Style(), Segment.line()
        under_label = Segment(" " * (labels + 1), dim)
        for label, value in self.items:
            yield Segment(label + " " * (labels - cell_len(label)), dim)
            yield Segment(" ", dim)
            for at, line in enumerate(_folded(console, value, room)):
                if at:
                    yield newline
                    yield under_label
                yield Segment(" ", plain)
                yield Segment(line)
            yield newline


def _folded(console: Console, value: str, room: int) -> list[str]:
    """`value` in lines of `room` cells, padded: as the table's value column folds it."""
    if cell_len(value) <= room:
        return [value + " " * (room - cell_len(value))]
    lines = Text(value).wrap(console, room, justify="left", overflow="fold")
    return [line.plain for line in lines]
