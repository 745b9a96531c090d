"""The roofline: log-log FLOP/s against arithmetic intensity, drawn with plotext inside a Textual widget.

Traps (DESIGN.md): plotext's own log scale rewrote its stored data on every build in plotext 5, and
textual-plotext pins plotext < 6. So log10 is taken here, plotext draws on linear axes labelled at decades,
and the widget renders `figure.build()` itself. plotext keeps one global figure: every build starts with
`figure.clear()` and happens on the UI thread, so nothing leaks between plots, repaints or resizes.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from ....core.common import display_text
from ....core.table import Ceiling
from ...presentation import format as fmt

if TYPE_CHECKING:
    import plotext as plt

# 256-colour palette indices (legible without truecolor, e.g. over SSH with no COLORTERM).
DRAM_COLOR = 12
COMPUTE_COLORS = (10, 14, 13, 11, 6, 2, 4)
# Each compute ceiling also has its own line glyph, so they stay apart with NO_COLOR ("hd": plotext half-blocks).
COMPUTE_GLYPHS = ("hd", "─", "┄", "·", "=", "~", "-")
LEGEND_GLYPHS = {"hd": "━"}
POINT_COLOR = 7
SELECTED_COLOR = 9
LEVEL_GLYPHS = {"l2": ("▲", 3), "l1": ("▼", 5)}  # the selected kernel at its L2 and L1 intensities
CACHE_LINES = {"l2": "/", "l1": ":"}  # the L2 and L1 ceilings' slopes, in their points' tints
POINT, SELECTED = "•", "◆"
# A point's glyph says its precision (with NO_COLOR too); its colour is its precision's ceiling's. The kernels
# of the largest time shares are drawn as their rank instead, named in the legend (issue 19.8).
PRECISION_GLYPHS = {"fp64": "○", "fp32": "•", "tf32": "◇", "bf16": "+", "fp16": "×", "fp8": "∗", "int8": "□"}
NUMBERED = 5
MIN_WIDTH, MIN_HEIGHT = 30, 8


@dataclass(frozen=True)
class Point:
    """One kernel row on the plot."""

    label: str
    ai: float  # FLOP per DRAM byte
    flop_per_s: float
    share: float  # % of kernel time
    position: int  # row position in the frame it came from
    precision: str = ""
    pct_of_peak: float = math.nan  # the row's own, against the peak of its precision under the roof chosen
    source: str = ""  # where that peak comes from (the row's peak_source: report, datasheet, measured on node)
    bound: str = ""  # the ceiling that bounds it: compute, dram, l2 or l1
    pct_of_roof: float = math.nan  # the time its limiting resource needs at that ceiling, over the time taken
    ai_l2: float = math.nan
    ai_l1: float = math.nan


@dataclass(frozen=True)
class Roofline:
    points: tuple[Point, ...]  # by time share, highest first: the order the selection walks
    compute: tuple[Ceiling, ...]  # FLOP/s ceilings, one per precision
    dram: Ceiling | None  # B/s
    caches: tuple[Ceiling, ...] = ()  # L2 and L1 bandwidth ceilings (B/s), where the report has their peaks
    dropped: int = 0  # rows without a finite positive AI and FLOP/s
    unknown: int = 0  # of those, rows whose AI or FLOP/s is unknown (the others did no FLOPs or moved no bytes)
    beyond: int = 0  # plottable rows past the limit (the smallest time shares)

    @property
    def key(self) -> tuple:
        return (self.points, self.compute, self.dram, self.caches)


def roofline_from(
    rows: pd.DataFrame,
    ceilings: list[Ceiling],
    order: np.ndarray | None = None,
    limit: int = 500,
    name: str = "kernel",
    gpu: str | None = None,
) -> Roofline:
    """Rows (all, or the positions in `order`) with finite positive ai_dram and flop_per_s, highest time share
    first, at most `limit`: more points than that only pile up on a terminal-sized plot. In a file with
    launches on several GPUs, only the rows of one GPU (`gpu`, else the first of `roof_gpus`) against its own
    ceilings: a point read against another GPU's roof is misplaced (an A100 kernel compute bound on its own
    roof sits under an H100's ridge)."""
    candidates = np.arange(len(rows)) if order is None else np.asarray(order, dtype=np.int64)
    main = gpu or next(iter(roof_gpus(rows, ceilings, candidates)), "")
    if len({c.gpu for c in ceilings}) > 1 and "gpu" in rows:
        candidates = candidates[rows["gpu"].astype(object).to_numpy()[candidates] == main]
    ai = rows["ai_dram"].to_numpy(dtype=float, na_value=np.nan)[candidates]
    rate = rows["flop_per_s"].to_numpy(dtype=float, na_value=np.nan)[candidates]
    ok = np.isfinite(ai) & np.isfinite(rate) & (ai > 0) & (rate > 0)
    share = rows["pct_time"].to_numpy(dtype=float, na_value=np.nan) if "pct_time" in rows else np.zeros(len(rows))
    positions = candidates[ok]
    positions = positions[np.argsort(-np.nan_to_num(share[positions], nan=-1.0), kind="stable")]
    beyond = max(0, len(positions) - limit)
    positions = positions[:limit]
    label_col = name if name in rows else "kernel"
    points = tuple(_point(rows, int(p), label_col, share) for p in positions)
    compute = tuple(c for c in ceilings if not c.bandwidth and c.gpu == main)
    dram = next((c for c in ceilings if c.name == "dram" and c.gpu == main), None)
    caches = tuple(c for c in ceilings if c.name in CACHE_LINES and c.gpu == main) if dram is not None else ()
    unknown = int((np.isnan(ai) | np.isnan(rate)).sum())  # infinite AI is known: no DRAM bytes moved
    return Roofline(points, compute, dram, caches, dropped=int((~ok).sum()), unknown=unknown, beyond=beyond)


def roof_gpus(rows: pd.DataFrame, ceilings: list[Ceiling], order: np.ndarray | None = None) -> list[str]:
    """The GPUs the rows (those in `order`) ran on, most launches first (the order of the ceilings; one without
    ceilings last); for a file on one GPU, its ceilings' one. Several: the Roofline screen draws one at a time."""
    gpus = list(dict.fromkeys(c.gpu for c in ceilings))
    if len(gpus) < 2 or "gpu" not in rows:
        return gpus[:1]
    names = rows["gpu"].astype(object).to_numpy()
    present = list(dict.fromkeys(names if order is None else names[np.asarray(order, dtype=np.int64)]))
    return [g for g in gpus if g in present] + sorted(str(g) for g in present if isinstance(g, str) and g not in gpus)


def _point(rows: pd.DataFrame, position: int, label_col: str, share: np.ndarray) -> Point:
    row = rows.iloc[position]
    return Point(
        label=display_text(fmt.text(row[label_col])),
        ai=float(row["ai_dram"]),
        flop_per_s=float(row["flop_per_s"]),
        share=float(share[position]),
        position=position,
        precision=fmt.text(row.get("precision")),
        pct_of_peak=_finite(row.get("pct_of_peak")),
        source=fmt.text(row.get("peak_source")),
        bound=fmt.text(row.get("roof")),
        pct_of_roof=_finite(row.get("pct_of_roof")),
        ai_l2=_positive(row.get("ai_l2")),
        ai_l1=_positive(row.get("ai_l1")),
    )


def _finite(value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return math.nan
    return value if math.isfinite(value) else math.nan


def _positive(value) -> float:
    value = _finite(value)
    return value if value > 0 else math.nan


def decade_label(k: int) -> str:
    """10^k as people write it: 0.01, 1, 100, 10k, 1G."""
    if k < 0:
        return f"{10.0**k:g}"
    prefix = ["", "k", "M", "G", "T", "P", "E", "Z"][min(k // 3, 7)]
    return f"{10 ** (k - 3 * min(k // 3, 7))}{prefix}"


@dataclass
class _Axes:
    x: tuple[float, float]
    y: tuple[float, float]


def _axes(data: Roofline, selected: int | None = None) -> _Axes:
    """Decades that hold what is drawn: every point at its DRAM intensity, the selected one at its L2 and L1
    intensities too (only its ▲ ▼ are drawn: another kernel's L1 intensity stretched the axis for nothing)."""
    shown = [data.points[selected]] if selected is not None and data.points else []
    xs = [math.log10(p.ai) for p in data.points] + [
        math.log10(v) for p in shown for v in (p.ai_l2, p.ai_l1) if not math.isnan(v)
    ]
    ys = [math.log10(p.flop_per_s) for p in data.points]
    ys += [math.log10(c.value) for c in data.compute]
    if data.dram is not None:
        xs += [math.log10(c.value / data.dram.value) for c in data.compute]
    xs = xs or [-1.0, 3.0]
    ys = ys or [9.0, 13.0]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(min(ys)), max(ys) + 0.3  # a third of a decade above the top line holds its label
    return _Axes((x0, max(x1, x0 + 2)), (y0, max(y1, y0 + 2)))


def _ticks(lo: float, hi: float, room: int, label_cells: int) -> tuple[list[int], list[str]]:
    """Decade ticks; every other (or third...) decade when the axis has no room for all labels."""
    decades = list(range(math.ceil(lo), math.floor(hi) + 1))
    step = 1
    while len(decades[::step]) * label_cells > room and step < len(decades):
        step += 1
    kept = decades[::step]
    return kept, [decade_label(k) for k in kept]


def _marker(symbol: str, color: int | None) -> plt.marker:
    import plotext as plt

    return plt.marker(symbol, color) if color is not None else plt.marker(symbol)


def _line_marker(color: int | None, glyph: str = "hd") -> plt.marker:
    import plotext as plt

    return plt.marker(glyph, color) if color is not None else plt.marker(glyph)


def ceiling_label(ceiling: Ceiling) -> str:
    unit = "B/s" if ceiling.bandwidth else "FLOP/s"
    return f"{_short(ceiling)} {fmt.si(ceiling.value, unit)}"


def ridge_of(data: Roofline, selected: int | None) -> Ceiling | None:
    """The compute ceiling whose ridge gets a label: the selected kernel's precision (the first named, for a
    mixed-precision kernel: 'fp64+fp32'), else the first."""
    if not data.compute or data.dram is None:
        return None
    wanted = data.points[selected].precision.split("+")[0] if selected is not None and data.points else ""
    return next((c for c in data.compute if c.name == wanted), data.compute[0])


def build_plot(data: Roofline, width: int, height: int, selected: int | None = None, color: bool = True) -> Text:
    """The plot, exactly `width` x `height` cells. Pure: same input, same text."""
    return draw_plot(data, width, height, selected, color)[0]


def draw_plot(
    data: Roofline, width: int, height: int, selected: int | None = None, color: bool = True
) -> tuple[Text, dict[int, list[int]]]:
    """The plot and its overlaps: point index -> the points hidden in its cell (see `stack`).

    plotext draws the axes and lines; the points are written into the cells their values land in, one marker per
    cell (the selected, else the highest-ranked: issue 19.8), then the labels (each compute ceiling's name at
    the right end of its own line, the selected precision's ridge, DRAM along its slope), only where they cover
    no point: a label that finds no such room is moved, then dropped."""
    import plotext as plt  # here, not at the top: its import takes ~0.3 s, and `open` draws no plot until `r`

    fig = plt.figure
    fig.clear()
    plt.terminal.limit(False, False)  # plotext caps plots at its own idea of the terminal (80x22 with no tty)
    fig.theme("simple" if color else "colorless")
    fig.plot_size(width, height)
    axes = _axes(data, selected)
    (x0, x1), (y0, y1) = axes.x, axes.y
    _draw_ceilings(fig, data, axes, color)
    fig.ruler("x").lim(x0, x1)
    fig.ruler("y").lim(y0, y1)
    x_ticks, y_ticks = _ticks(x0, x1, width - 6, 6), _ticks(y0, y1, max(1, height - 4), 2)
    fig.ruler("x").ticks(*x_ticks)
    fig.ruler("y").ticks(*y_ticks)
    fig.label("arithmetic intensity, FLOP/byte (DRAM)", "x")
    fig.label("FLOP/s", "y")
    drawn = Text.from_ansi(fig.build().string().rstrip("\n"), no_wrap=True)
    fig.clear()  # leave plotext's global figure empty for whoever draws next
    grid = _Grid(drawn, axes, x_ticks[0], y_ticks[0])
    if not grid.ok:
        return grid.text(), {}
    overlaps = _draw_points(grid, data, selected, color)
    _label(grid, data, axes, selected, color)
    return grid.text(), overlaps


def _draw_ceilings(fig, data: Roofline, axes: _Axes, color: bool) -> None:
    (x0, x1), y0 = axes.x, axes.y[0]
    top = max((math.log10(c.value) for c in data.compute), default=None)
    slopes = [(c, LEVEL_GLYPHS[c.name][1], CACHE_LINES[c.name]) for c in data.caches]
    if data.dram is not None:
        slopes.append((data.dram, DRAM_COLOR, "hd"))  # last: drawn over a cache slope it meets
    for ceiling, tint, glyph in slopes:
        bw = math.log10(ceiling.value)
        start = max(x0, y0 - bw)  # where the slope enters the plot
        end = (top - bw) if top is not None else x1
        fig.draw(fig.segment([start, end], [start + bw, end + bw], marker=_line_marker(tint if color else None, glyph)))
    for i, ceiling in enumerate(data.compute):
        y, left = math.log10(ceiling.value), _ceiling_start(data, ceiling, x0)
        compute_tint = COMPUTE_COLORS[i % len(COMPUTE_COLORS)] if color else None
        fig.draw(
            fig.segment([left, x1], [y, y], marker=_line_marker(compute_tint, COMPUTE_GLYPHS[i % len(COMPUTE_GLYPHS)]))
        )


def _ceiling_start(data: Roofline, ceiling: Ceiling, x0: float) -> float:
    """Where a compute ceiling's line starts (log10 AI): at its ridge with the DRAM slope, or the plot's left."""
    return max(x0, math.log10(ceiling.value) - math.log10(data.dram.value)) if data.dram is not None else x0


VISIBLE_LINE = 3  # cells of a ceiling's line its own label must leave uncovered, or the line cannot be seen


HALF_BLOCKS = "▀▄▌▐▖▗▘▝▚▞▙▛▜▟█"  # what plotext's "hd" marker draws
POINT_GLYPHS = frozenset({POINT, SELECTED, *(glyph for glyph, _ in LEVEL_GLYPHS.values())})


class _Grid:
    """The drawn plot as cells: where a value lands, what a cell holds, and writing a label into cells.

    Where a value lands is read off the drawing itself (the rows of the y ticks, the columns of the x ticks,
    the frame), not re-derived from plotext's internals."""

    def __init__(self, drawn: Text, axes: _Axes, x_ticks: list[int], y_ticks: list[int]) -> None:
        self.lines = list(drawn.split("\n", allow_blank=True))
        self.cells = [line.plain for line in self.lines]
        tops = [r for r, line in enumerate(self.cells) if "┌" in line]
        bottoms = [r for r, line in enumerate(self.cells) if "└" in line]
        self.ok = bool(tops and bottoms) and bottoms[0] - tops[0] > 2
        if not self.ok:
            return
        top, bottom = tops[0], bottoms[0]
        left, right = self.cells[top].index("┌"), self.cells[top].index("┐")
        self.rows, self.cols = (top + 1, bottom - 1), (left + 1, right - 1)
        y_rows = [r for r in range(top + 1, bottom) if self.cells[r][left] == "┤"]
        x_cols = [c for c, ch in enumerate(self.cells[bottom]) if ch == "┬"]
        self.y_map = _linear(sorted(y_ticks, reverse=True), y_rows, (axes.y[1], axes.y[0]), self.rows)
        self.x_map = _linear(sorted(x_ticks), x_cols, axes.x, self.cols)

    def row_of(self, y: float) -> int:
        return round(self.y_map(y))

    def col_of(self, x: float) -> int:
        return round(self.x_map(x))

    def y_at(self, row: int) -> float:
        """The value (log10) a row stands for."""
        return self.y_map.inverse(row)

    def line_row(self, y: float, glyph: str) -> int:
        """The row a horizontal line at `y` drawn with `glyph` ended up on: its glyph at the frame's right
        edge, on the row computed or one beside it (plotext rounds half-cell pixels its own way)."""
        chars = HALF_BLOCKS if glyph == "hd" else glyph
        estimate = self.row_of(y)
        for row in (estimate, estimate - 1, estimate + 1):
            if self.rows[0] <= row <= self.rows[1] and self.cells[row][self.cols[1]] in chars:
                return row
        return estimate

    def inside(self, row: int, col: int, n: int) -> bool:
        return self.rows[0] <= row <= self.rows[1] and self.cols[0] <= col and col + n - 1 <= self.cols[1]

    def covers_point(self, row: int, col: int, n: int) -> bool:
        return any(ch in POINT_GLYPHS for ch in self.cells[row][col : col + n])

    def blank(self, row: int, col: int, n: int) -> bool:
        return self.inside(row, col, n) and not self.cells[row][col : col + n].strip()

    def put(self, row: int, col: int, label: str, style: Style) -> None:
        line = self.lines[row]
        self.lines[row] = line[:col] + Text(label, style) + line[col + len(label) :]
        self.cells[row] = self.lines[row].plain

    def text(self) -> Text:
        out = Text("\n").join(self.lines)
        out.no_wrap = True
        return out


@dataclass(frozen=True)
class _Linear:
    """value -> cell index (unrounded) and back."""

    v0: float
    c0: float
    per: float  # cells per unit of value

    def __call__(self, value: float) -> float:
        return self.c0 + (value - self.v0) * self.per

    def inverse(self, cell: float) -> float:
        return self.v0 + (cell - self.c0) / self.per


def _linear(ticks: list[int], at: list[int], span: tuple[float, float], cells: tuple[int, int]) -> _Linear:
    """Fitted through the ticks drawn (two or more), else through the frame's ends."""
    v0: float
    v1: float
    if len(ticks) == len(at) and len(at) >= 2:
        (v0, c0), (v1, c1) = (ticks[0], at[0]), (ticks[-1], at[-1])
    else:
        (v0, c0), (v1, c1) = (span[0], cells[0]), (span[1], cells[1])
    return _Linear(v0, c0, (c1 - c0) / (v1 - v0))


def _label(grid: _Grid, data: Roofline, axes: _Axes, selected: int | None, color: bool) -> None:
    def tint(index: int | None) -> Style:
        return Style(color=f"color({index})") if color and index is not None else Style()

    # Each compute ceiling: its name at the right end of its own line; on the row above or below when a
    # point (or another ceiling's name) is there, or when the name would cover all of a short line (a high
    # ceiling whose ridge is far right); dropped when neither has room.
    for i, ceiling in enumerate(data.compute):
        label = f" {_short(ceiling)}"
        col = grid.cols[1] - len(label) + 1
        row = grid.line_row(math.log10(ceiling.value), COMPUTE_GLYPHS[i % len(COMPUTE_GLYPHS)])
        short = grid.col_of(_ceiling_start(data, ceiling, axes.x[0])) > col - VISIBLE_LINE
        for r in (row - 1, row + 1) if short else (row, row - 1, row + 1):
            if (
                grid.inside(r, col, len(label))
                and not grid.covers_point(r, col, len(label))
                and not any(ch.isalnum() for ch in grid.cells[r][col : col + len(label)])
            ):
                grid.put(r, col, label, tint(COMPUTE_COLORS[i % len(COMPUTE_COLORS)]))
                break
    ridge = ridge_of(data, selected)
    if ridge is not None and data.dram is not None:  # a ridge is only ever where there is a DRAM slope
        x = math.log10(ridge.value / data.dram.value)
        label = f"{_short(ridge)} ridge {fmt.ratio(10**x)}"
        glyph = COMPUTE_GLYPHS[data.compute.index(ridge) % len(COMPUTE_GLYPHS)]
        row, col = grid.line_row(math.log10(ridge.value), glyph), grid.col_of(x)
        # Under the ceiling right of the ridge, else left of it, else above: on blank cells only.
        _first_blank(
            grid,
            [
                (row + 1, col + 1),
                (row + 1, col - len(label)),
                (row + 2, col + 1),
                (row - 1, col + 1),
                (row - 1, col - len(label)),
            ],
            label,
            Style(bold=True),
        )
    if data.dram is not None:
        _label_slope(grid, data, axes, data.dram, tint(DRAM_COLOR))
    for cache in data.caches:
        _label_slope(grid, data, axes, cache, tint(LEVEL_GLYPHS[cache.name][1]))


def _label_slope(grid: _Grid, data: Roofline, axes: _Axes, ceiling: Ceiling, style: Style) -> None:
    """`DRAM` (`L2`, `L1`) left of its slope, a blank cell between, about a third of the way up the slope;
    right of it (under the roof) where another slope leaves no room on the left."""
    bw = math.log10(ceiling.value)
    label = _short(ceiling)
    top = min(max((math.log10(c.value) for c in data.compute), default=axes.y[1]), axes.y[1])
    bottom = max(axes.x[0] + bw, axes.y[0])
    lo, hi = max(grid.row_of(top), grid.rows[0]), min(grid.row_of(bottom), grid.rows[1])
    aim = hi - (hi - lo) * 0.35
    left, right = [], []
    for row in sorted(range(lo, hi + 1), key=lambda r: abs(r - aim)):
        col = grid.col_of(grid.y_at(row) - bw)
        start = max(col - 3, grid.cols[0])
        near = grid.cells[row][start : col + 4]
        if near.strip():  # the slope's cells in this row, near where they should be
            left.append((row, start + len(near) - len(near.lstrip()) - len(label) - 1))
            right.append((row, start + len(near.rstrip()) + 1))
    _first_blank(grid, left + right, label, style)


def _first_blank(grid: _Grid, spots: list[tuple[int, int]], label: str, style: Style) -> None:
    """Write `label` at the first (row, col) whose cells are all blank; nowhere if none is."""
    for row, col in spots:
        if grid.blank(row, col, len(label) + 1 if col + len(label) <= grid.cols[1] else len(label)):
            grid.put(row, col, label, style)
            return


def _short(ceiling: Ceiling) -> str:
    return fmt.ceiling(ceiling.name)


def precision_of(point: Point) -> str:
    """The precision a point is drawn as: the first of a mixed kernel's (`fp64+fp32`: its larger FLOP share)."""
    return point.precision.split("+")[0].lower()


def point_style(data: Roofline, point: Point) -> tuple[str, int]:
    """(glyph, 256-colour index) of a point by its precision: the colour of that precision's compute ceiling."""
    precision = precision_of(point)
    tint = next(
        (COMPUTE_COLORS[i % len(COMPUTE_COLORS)] for i, c in enumerate(data.compute) if c.name.lower() == precision),
        POINT_COLOR,
    )
    return PRECISION_GLYPHS.get(precision.removeprefix("tensor_"), POINT), tint  # TC BF16 too: `+`


def numbered(data: Roofline) -> list[int]:
    """The points drawn as their rank (1 = largest time share): the first NUMBERED, points being in that order."""
    return list(range(min(NUMBERED, len(data.points)))) if len(data.points) > 1 else []


def stack(cells: list[tuple[int, int]], selected: int | None) -> dict[int, list[int]]:
    """Points that land in one cell: the one drawn (the selected, else the first: points are in time-share
    order, so the highest-ranked) -> the others, hidden under it. Only cells of two or more points."""
    by_cell: dict[tuple[int, int], list[int]] = {}
    for i, cell in enumerate(cells):
        by_cell.setdefault(cell, []).append(i)
    out = {}
    for points in by_cell.values():
        if len(points) > 1:
            top = selected if selected in points else points[0]
            out[top] = [i for i in points if i != top]
    return out


def _draw_points(grid: _Grid, data: Roofline, selected: int | None, color: bool) -> dict[int, list[int]]:
    """Each point's marker in its cell, one per cell (`stack`): its rank for the top kernels, else its
    precision's glyph, ◆ for the selected; the selected one's ▲ ▼ at its L2 and L1 intensities. Returns the
    overlaps, which the legend lists."""

    def style(index: int | None) -> Style:
        return Style(color=f"color({index})") if color and index is not None else Style()

    cells = [(grid.row_of(math.log10(p.flop_per_s)), grid.col_of(math.log10(p.ai))) for p in data.points]
    overlaps = stack(cells, selected)
    hidden = {i for under in overlaps.values() for i in under}
    ranks = numbered(data)
    if selected is not None and data.points:
        p = data.points[selected]
        for level, (glyph, tint) in LEVEL_GLYPHS.items():
            ai = getattr(p, f"ai_{level}")
            row, col = cells[selected][0], grid.col_of(math.log10(ai)) if not math.isnan(ai) else -1
            if not math.isnan(ai) and grid.inside(row, col, 1) and (row, col) not in cells:
                grid.put(row, col, glyph, style(tint))
    for i, p in enumerate(data.points):
        if i in hidden or not grid.inside(*cells[i], 1):
            continue
        glyph, tint = point_style(data, p)
        if i == selected:
            glyph, tint = SELECTED, SELECTED_COLOR
        elif i in ranks:
            glyph = str(i + 1)
        grid.put(*cells[i], glyph, style(tint) + (Style(bold=True) if i == selected else Style()))
    return overlaps


def legend(
    data: Roofline, selected: int | None, color: bool = True, overlaps: dict[int, list[int]] | None = None
) -> list[tuple[str, Style]]:
    """Legend entries (glyph + text, style): drawn under the plot so it never covers a point. `overlaps` (from
    `draw_plot`): a ranked kernel says how many points its marker hides (`+2`) or which marker hides it
    (`under 1`, `under ◆`); the points hidden under an unranked marker are counted in one entry."""
    overlaps = overlaps or {}
    under = {i: top for top, hidden in overlaps.items() for i in hidden}

    def tint(index: int) -> Style:
        return Style(color=f"color({index})") if color else Style()

    entries = []
    if data.dram is not None:
        entries.append((f"━ {ceiling_label(data.dram)}", tint(DRAM_COLOR)))
    for cache in data.caches:
        entries.append((f"{CACHE_LINES[cache.name]} {ceiling_label(cache)}", tint(LEVEL_GLYPHS[cache.name][1])))
    for i, ceiling in enumerate(data.compute):
        glyph = COMPUTE_GLYPHS[i % len(COMPUTE_GLYPHS)]
        entries.append(
            (
                f"{LEGEND_GLYPHS.get(glyph, glyph)} {ceiling_label(ceiling)}",
                tint(COMPUTE_COLORS[i % len(COMPUTE_COLORS)]),
            )
        )
    if data.points:
        ranks = numbered(data)
        for i in ranks:  # the rank, a name short enough to sit beside the others, its precision and time share
            p = data.points[i]
            label = p.label if len(p.label) <= 18 else p.label[:17] + "…"
            share = f"{p.share:.0f}%" if p.share >= 1 else "<1%"
            stacked = _stacked(i, overlaps, under, ranks, selected)
            entries.append(
                (f"{i + 1} {label} {precision_of(p) or '?'} {share}{stacked}", tint(point_style(data, p)[1]))
            )
        glyphs = dict.fromkeys(
            (precision_of(p) or "kernel", point_style(data, p)) for i, p in enumerate(data.points) if i not in ranks
        )
        for name, (glyph, index) in glyphs:  # the other kernels: a glyph per precision
            entries.append((f"{glyph} {name}", tint(index)))
        covered = f" +{len(overlaps[selected])}" if selected in overlaps else ""
        entries.append((f"{SELECTED} selected{covered}", tint(SELECTED_COLOR) + Style(bold=True)))
        # Under an unranked marker (a cell of unranked points only: a ranked one would be drawn on top).
        others = sum(len(hidden) for top, hidden in overlaps.items() if top not in ranks and top != selected)
        if others:
            entries.append((f"+{others} under other markers", Style()))
    if selected is not None and data.points:
        p = data.points[selected]
        for level, (glyph, index) in LEVEL_GLYPHS.items():
            if getattr(p, f"ai_{level}") == getattr(p, f"ai_{level}"):
                entries.append((f"{glyph} selected at {level.upper()} AI", tint(index)))
    return entries


def _marker_of(i: int, ranks: list[int], selected: int | None) -> str:
    return SELECTED if i == selected else str(i + 1) if i in ranks else "a marker"


def _stacked(
    i: int, overlaps: dict[int, list[int]], under: dict[int, int], ranks: list[int], selected: int | None
) -> str:
    """` +2` (points hidden under rank i's marker), ` under 1` / ` under ◆` (the marker that hides it)."""
    if i in under:
        return f" under {_marker_of(under[i], ranks, selected)}"
    return f" +{len(overlaps[i])}" if overlaps.get(i) and i != selected else ""


def legend_lines(entries: list[tuple[str, Style]], width: int) -> list[Text]:
    lines: list[Text] = [Text()]
    for label, style in entries:
        if lines[-1].cell_len and lines[-1].cell_len + 2 + len(label) > width:
            lines.append(Text())
        if lines[-1].cell_len:
            lines[-1].append("  ")
        lines[-1].append(label, style)
    for line in lines:
        line.truncate(width, overflow="ellipsis")
    return lines


class CachedPlot(Widget):
    """A plot drawn once per (data, selection, size, colour) and reused on every repaint."""

    selected: int | None = None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._drawn: tuple[tuple, Text] = ((), Text())

    def data_key(self) -> object:
        raise NotImplementedError

    def draw(self, width: int, height: int, color: bool) -> Text:
        raise NotImplementedError

    def render(self) -> Text:
        width, height = self.size
        color = not self.app.no_color
        key = (self.data_key(), self.selected, width, height, color)
        if key != self._drawn[0]:
            self._drawn = (key, self.draw(width, height, color))
        return self._drawn[1]


class RooflinePlot(CachedPlot):
    """Renders a `Roofline` to fit the widget; rebuilt only when size, data or selection change."""

    DEFAULT_CSS = "RooflinePlot { height: 1fr; min-height: 8; }"

    def __init__(self, data: Roofline | None = None, selected: int | None = 0, *, id: str | None = None) -> None:
        """`selected`: the point drawn as selected from the start (the screen's, which need not be the first)."""
        super().__init__(id=id)
        self.data = data
        self.selected = selected if data is not None and data.points else None

    def select(self, index: int | None) -> None:
        self.selected = index
        self.refresh()

    def data_key(self) -> object:
        return self.data.key if self.data else None

    def draw(self, width: int, height: int, color: bool) -> Text:
        if self.data is None:
            return Text("No data yet.")
        extra = legend_lines(legend(self.data, self.selected, color), width)
        for _ in range(3):  # the overlaps depend on the plot's height, which the legend's lines take from
            if width < MIN_WIDTH or height - len(extra) < MIN_HEIGHT:
                message = f"Too small for a roofline ({width}x{height}): enlarge the terminal."
                return Text("\n".join(textwrap.wrap(message, max(width, 1))[: max(height, 1)]), no_wrap=True)
            text, overlaps = draw_plot(self.data, width, height - len(extra), self.selected, color)
            fitted = legend_lines(legend(self.data, self.selected, color, overlaps), width)
            if len(fitted) == len(extra):
                break
            extra = fitted
        extra = fitted
        for line in extra:
            text.append("\n")
            text.append_text(line)
        text.no_wrap, text.overflow = True, "crop"
        return text
