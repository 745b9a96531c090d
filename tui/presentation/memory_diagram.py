"""The Kernel screen's Memory chart panel as a diagram: the memory hierarchy as boxes joined by
arrows, kernel -> L1/TEX -> L2 -> DRAM, each edge labelled with what crossed it and each unit with
its hit rate, its shared-memory and local traffic and the bandwidth it reached against its peak.
The same figures as `kernel_sections.memory_chart`, drawn with Unicode box drawing in text lines no
wider than a panel at 80 columns; a figure the report lacks is left out, or `?` on an edge."""

from __future__ import annotations

import textwrap

import pandas as pd

from . import format as fmt
from .kernel_sections import _bandwidth, _bytes, _l2, _requests, row_value

WIDTH = 72  # columns of the widest line: a panel's inside at 80 columns, and at 160 (two)
ARROW_AT = 4  # the column of the vertical arrows, under each box's left edge


def memory_diagram(row: pd.Series, width: int = WIDTH) -> list[str]:
    """The diagram's lines; empty where the row has no memory chart (`--set full` collects it)."""

    def v(name: str) -> float | None:
        value = row_value(row, name)
        return float(value) if isinstance(value, (int, float)) else None

    if v("mem_global_ld_requests") is None and v("mem_l2_sectors") is None:
        return []
    l1 = [_bandwidth(v, "l1"), *_l1_sides(v)]
    l2 = [_l2(v), _bandwidth(v, "l2")]
    up_down = "▲ {} read, ▼ {} written"
    out = _box("Kernel", [], width)
    out += _edge([_requests(v, "ld", "loads"), _requests(v, "st", "stores")], width)
    out += _box("L1/TEX", l1, width)
    out += _edge(
        [up_down.format(_bytes(v("mem_l2_to_l1_bytes")), _bytes(v("mem_l1_to_l2_bytes")))], width
    )
    out += _box("L2", l2, width)
    out += _edge(
        [up_down.format(_bytes(v("dram_read_bytes")), _bytes(v("dram_write_bytes")))], width
    )
    return out + _box("DRAM", [_bandwidth(v, "dram")], width, last=True)


def _l1_sides(v) -> list[str]:
    """Shared memory (wavefronts, bank conflicts) and local memory (spills): L1/TEX serves both."""
    out = []
    waves, conflicts = v("mem_shared_wavefronts"), v("mem_shared_bank_conflicts")
    if waves:
        share = f" ({fmt.pct(100 * (conflicts or 0) / waves)})" if conflicts is not None else ""
        out.append(
            f"Shared: {fmt.si(waves)} wavefronts, {fmt.si(conflicts or 0)} bank conflicts{share}"
        )
    local = [v("mem_local_ld_sectors"), v("mem_local_st_sectors")]
    if any(local):
        out.append(
            f"Local (spills): {fmt.si(local[0] or 0)} load, {fmt.si(local[1] or 0)} store sectors"
        )
    return out


def _box(title: str, lines: list[str], width: int, last: bool = False) -> list[str]:
    """A unit: its name in the top border, its figures inside (wrapped to the width), and where an
    arrow leaves it, a tee in the bottom border above the arrow."""
    inner = width - 4  # `│ ` and ` │`
    body = [part for line in lines if line for part in textwrap.wrap(line, inner)]
    size = max([len(title) + 4, *(len(line) for line in body)]) + 2
    top = f"╭─ {title} " + "─" * (size - len(title) - 3) + "╮"
    rows = [f"│ {line.ljust(size - 2)} │" for line in body]
    bottom = "─" * size
    if not last:  # the edge to the next unit leaves from the tee
        bottom = bottom[: ARROW_AT - 1] + "┬" + bottom[ARROW_AT:]
    return [top, *rows, f"╰{bottom}╯"]


def _edge(labels: list[str], width: int) -> list[str]:
    """The arrow down to the next unit, with what crossed the edge beside it."""
    pad = " " * ARROW_AT
    room = width - ARROW_AT - 2
    shown = [part for label in labels if label for part in textwrap.wrap(label, room)]
    return [f"{pad}│ {label}" for label in shown or [""]] + [f"{pad}▼"]
