"""Blocks of items laid out in lines that break only between items: the run summary of the app and
the CLI's header share it. Why not word wrapping: it splits `FLOP %Peak` from its `0.3%` and starts
lines with `·`; here a block wraps only between its items, short blocks share a line, and a hint too
long for one line is cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from ...core.common import display_text
from .names import cut_end


@dataclass(frozen=True)
class Block:
    """Items in one style, `sep` between them; a line breaks only between items, after the
    separator."""

    items: list[str]
    style: str = ""
    sep: str = " · "
    # continue on the previous block's last line (after `sep`) when there is room
    join: bool = False
    clip: bool = False  # one line, cut at the end: a hint must not take the table's rows
    # what it says, in a few words (`A100-PCIE-40GB ceilings`): named when a height cap cuts it
    what: str = ""

    def shown(self) -> list[str]:
        """The items as shown: a GPU name, path or kernel name from a report with its control
        characters escaped (the headers of the CLI and the app both pass here)."""
        return [display_text(item) for item in self.items]

    def pieces(self, width: int) -> list[str]:
        """The items with their separators; one wider than the line split into its words."""
        tail = self.sep.rstrip()
        shown = self.shown()
        items = [f"{item}{tail}" for item in shown[:-1]] + shown[-1:]
        out: list[str] = []
        for item in items:
            out += (
                [item]
                if cell_len(item) <= width
                else [cut_end(word, width) for word in item.split()]
            )
        return out


def lines(blocks: list[Block], width: int) -> list[Text]:
    """Fill lines with items, a new line where an item does not fit or a block starts (unless it
    joins)."""
    return [line for line, _ in laid_out(blocks, width)]


def laid_out(blocks: list[Block], width: int) -> list[tuple[Text, list[Block]]]:
    """`lines`, each with the blocks on it (a joining block shares its first line with the one
    before)."""
    out: list[tuple[Text, list[Block]]] = []
    width = max(width, 1)
    for block in blocks:
        if block.clip:
            out.append(
                (Text(cut_end(block.sep.join(block.shown()), width), style=block.style), [block])
            )
            continue
        pieces = block.pieces(width)
        if (
            block.join
            and out
            and pieces
            and cell_len(out[-1][0].plain + block.sep + pieces[0]) <= width
        ):
            # the line goes on: the separator first
            out[-1][0].append(block.sep.rstrip(), style=block.style)
            out[-1][1].append(block)
        else:
            out.append((Text(), [block]))
        for piece in pieces:
            line = out[-1][0]
            if line.plain and cell_len(line.plain) + 1 + cell_len(piece) > width:
                out.append((Text(), [block]))
                line = out[-1][0]
            line.append((" " if line.plain else "") + piece, style=block.style)
    return out
