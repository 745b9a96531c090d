"""The kernel table as people read it: which canonical columns, their titles, formats and priorities.

Priority decides what drops first on a narrow terminal (higher number drops first).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from . import format as fmt


@dataclass(frozen=True)
class Column:
    name: str  # canonical column
    title: str
    render: Callable[[object], str]
    priority: int
    width: int
    numeric: bool = True


KERNEL_TABLE = [
    Column("kernel", "Kernel", fmt.text, 0, 36, numeric=False),
    Column("count", "N", fmt.integer, 3, 6),
    Column("duration_s", "Time", fmt.seconds, 0, 9),
    Column("pct_time", "%Time", fmt.pct, 1, 6),
    Column("flop", "FLOP", lambda v: fmt.si(v), 2, 8),
    Column("flop_per_s", "FLOP/s", lambda v: fmt.si(v), 1, 8),
    Column("dram_bytes", "DRAM B", lambda v: fmt.si(v, "B"), 4, 8),
    Column("dram_bytes_per_s", "DRAM B/s", lambda v: fmt.si(v, "B/s"), 2, 10),
    Column("ai_dram", "AI", fmt.ratio, 3, 7),
    Column("pct_of_peak", "%Peak", fmt.pct, 1, 6),
    Column("bound", "Bound", fmt.text, 2, 7, numeric=False),
    Column("precision", "Prec", fmt.text, 5, 17, numeric=False),
]


def fit(columns: list[Column], width: int, keep: Collection[str] = ()) -> list[Column]:
    """Drop the lowest-priority columns until the table fits `width` cells (kernel column shrinks last).
    Columns named in `keep` stay: the sort column (a table sorted by values it does not show reads as
    shuffled) and the one the cursor moved to (every column is reachable by `left`/`right`)."""
    chosen = list(columns)
    while len(chosen) > 2 and sum(c.width + 1 for c in chosen) > width:
        worst = max((c for c in chosen if c.priority > 0 and c.name not in keep), key=lambda c: c.priority,
                    default=None)
        if worst is None:
            break
        chosen.remove(worst)
    return chosen
