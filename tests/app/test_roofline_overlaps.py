"""Issue 19.8: markers that land in one cell of the roofline. The higher-ranked marker stays visible
(the selected ◆ above all, then rank 1 before 2 ..., then the larger time share) and the legend says
what it hides (`+2`, `under 2`, `+N under other markers`). The demo (a real H100 capture) at 80x24
has such cells: they are found here from the kernels table and the axis ticks drawn on the screen,
not from the plot's own code."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from flopscope.core import read_report
from flopscope.tui.app.screens.roofline import RooflineScreen

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines

DEMO = (
    Path(__file__).resolve().parents[2]
    / "tui"
    / "examples"
    / "train_transformer_bf16_bs8.ncu-rep.xz"
)
PREFIX = {"": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15}


def decade(label: str) -> int:
    """`100T` -> 14, `0.1` -> -1: a tick label as the power of ten it names."""
    number, prefix = re.fullmatch(r"([\d.]+)([kMGTP]?)", label).groups()
    return round(math.log10(float(number))) + PREFIX[prefix]


def axes(lines: list[str]) -> tuple[callable, callable, int, int]:
    """(row of log10 FLOP/s, column of log10 AI) fitted through the ticks drawn, and the frame's
    rows."""
    top = next(r for r, line in enumerate(lines) if "┌" in line)
    bottom = next(r for r, line in enumerate(lines) if "└" in line)
    left = lines[top].index("┌")
    y = [
        (decade(lines[r][:left].strip()), r)
        for r in range(top + 1, bottom)
        if lines[r][left] == "┤"
    ]
    ticks = [c for c, ch in enumerate(lines[bottom]) if ch == "┬"]
    names = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", lines[bottom + 1])]
    x = [(decade(next(name for start, end, name in names if start <= c < end)), c) for c in ticks]

    def fit(points):
        (v0, c0), (v1, c1) = points[0], points[-1]
        return lambda v: round(c0 + (v - v0) * (c1 - c0) / (v1 - v0))

    return fit(y), fit(x), top, bottom


async def test_a_cell_of_several_points_shows_the_highest_ranked_and_the_legend_names_the_rest():
    report = read_report(DEMO)
    rows = (
        report.group("name")
        .sort_values("pct_time", ascending=False, kind="stable")
        .reset_index(drop=True)
    )
    # Ranks count every row, as the table does (issue 41.1: rows without FLOPs are on the strip,
    # with their rank).
    rank = {name: i + 1 for i, name in enumerate(rows["kernel"][:5])}
    ai, rate = rows["ai_dram"].to_numpy(dtype=float), rows["flop_per_s"].to_numpy(dtype=float)
    plotted = rows[np.isfinite(ai) & np.isfinite(rate) & (ai > 0) & (rate > 0)].reset_index(
        drop=True
    )
    # `down`: the table's 2nd row, plotted
    selected = plotted.index[plotted["kernel"] == rows["kernel"][1]][0]
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        await pilot.press("down")  # the 2nd kernel selected: the 1st shows its rank
        await pilot.pause(0.1)
        lines = screen_lines(app)
    row_of, col_of, _, bottom = axes(lines)
    cells: dict[tuple[int, int], list[int]] = {}
    for i, (a, f) in enumerate(zip(plotted["ai_dram"], plotted["flop_per_s"], strict=True)):
        cells.setdefault((row_of(math.log10(f)), col_of(math.log10(a))), []).append(i)
    shared = {cell: points for cell, points in cells.items() if len(points) > 1}
    ranked = {i: rank[name] for i, name in enumerate(plotted["kernel"]) if name in rank}
    assert any(i in ranked for points in shared.values() for i in points), (
        "the demo should share a ranked cell"
    )
    legend = " ".join(lines[bottom + 2 :])
    hidden_unnamed = 0
    for (row, col), points in shared.items():
        # The selected, else the highest ranked, else the largest time share.
        top_point = (
            selected if selected in points else min(points, key=lambda i: (ranked.get(i, 99), i))
        )
        drawn = lines[row][col]
        marker = (
            "◆"
            if top_point == selected
            else str(ranked[top_point])
            if top_point in ranked
            else drawn
        )
        assert drawn == marker, (row, col)
        for i in points:
            # a ranked kernel hidden: the legend says under which marker
            if i != top_point and i in ranked:
                under = marker if top_point == selected or top_point in ranked else "a marker"
                assert re.search(rf"{ranked[i]} .+? (\d+%|<1%) under {re.escape(under)}", legend), (
                    i,
                    legend,
                )
        if top_point == selected:
            assert f"◆ selected +{len(points) - 1}" in legend
        elif top_point in ranked:
            assert re.search(
                rf"{ranked[top_point]} .+? (\d+%|<1%) \+{len(points) - 1}\b", legend
            ), legend
        else:
            hidden_unnamed += sum(1 for i in points if i != top_point and i not in ranked)
    if hidden_unnamed:
        assert f"+{hidden_unnamed} under other markers" in legend
