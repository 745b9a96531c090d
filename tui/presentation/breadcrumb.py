"""Where a screen is, as one line: `demo.ncu-rep › by name › nvjet_hsh_…` (the Kernels and Kernel
screens)."""

from __future__ import annotations

from rich.cells import cell_len

from ...core.common import display_text
from .names import cut_end

SEP = " › "


def crumbs(parts: list[str], width: int) -> list[str]:
    """`parts` (escaped: they are report and run names) fitted into `width` cells with SEP between
    them. The last part is what the screen shows and keeps its room: the earlier ones are cut first,
    from the first (`trai…`), to one cell (`…`) at the least; the last is cut at its end only when
    the others cannot give more."""
    parts = [display_text(p) for p in parts]
    for i in range(len(parts) - 1):
        excess = cell_len(SEP.join(parts)) - width
        if excess <= 0:
            break
        parts[i] = _cut(parts[i], cell_len(parts[i]) - excess)
    excess = cell_len(SEP.join(parts)) - width
    if excess > 0 and parts:
        parts[-1] = _cut(parts[-1], cell_len(parts[-1]) - excess)
    return parts


def _cut(part: str, room: int) -> str:
    return cut_end(part, room) if room > 1 else "…"  # `…` says a part is there
