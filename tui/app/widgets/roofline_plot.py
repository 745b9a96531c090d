"""The roofline: log-log FLOP/s against arithmetic intensity, drawn with plotext inside a Textual
widget.

Traps (DESIGN.md): plotext's own log scale rewrote its stored data on every build in plotext 5, and
textual-plotext pins plotext < 6. So log10 is taken here, plotext draws on linear axes labelled at
decades, and the widget renders `figure.build()` itself. plotext keeps one global figure: every
build starts with `figure.clear()` and happens on the UI thread, so nothing leaks between plots,
repaints or resizes."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from ....core.common import display_text
from ....core.table import Ceiling
from ...presentation import format as fmt
from ...presentation.names import distinct_cuts

if TYPE_CHECKING:
    import plotext as plt

# 256-colour palette indices (legible without truecolor, e.g. over SSH with no COLORTERM).
DRAM_COLOR = 12
COMPUTE_COLORS = (10, 14, 13, 11, 6, 2, 4)
# Each compute ceiling also has its own line glyph, so they stay apart with NO_COLOR ("hd": plotext
# half-blocks).
COMPUTE_GLYPHS = ("hd", "─", "┄", "·", "=", "~", "-")
LEGEND_GLYPHS = {"hd": "━"}
POINT_COLOR = 7
SELECTED_COLOR = 9  # the selected kernel's own roof line
# The selected marker in reverse video: no series shares it (a bright red ◆ read as the BF16
# ceiling's magenta).
SELECTED_STYLE = Style(color="color(0)", bgcolor="color(15)", bold=True)
LEVEL_GLYPHS = {"l2": ("▲", 3), "l1": ("▼", 5)}  # the selected kernel at its L2 and L1 intensities
# a memory level's slope, and the strip's kernels it bounds
LEVEL_TINTS = {"dram": DRAM_COLOR, "l2": 3, "l1": 5}
CACHE_LINES = {"l2": "/", "l1": ":"}  # the L2 and L1 ceilings' slopes, in their points' tints
POINT, SELECTED = "•", "◆"
PLOT, STRIP, NOWHERE = "plot", "strip", "nowhere"  # where a kernel is drawn (Point.place)
# A point's glyph says its precision (with NO_COLOR too); its colour is its precision's ceiling's.
# The kernels of the largest time shares are drawn as their rank instead, named in the legend (issue
# 19.8).
PRECISION_GLYPHS = {
    "fp64": "○",
    "fp32": "•",
    "tf32": "◇",
    "bf16": "+",
    "fp16": "×",
    "fp8": "∗",
    "int8": "□",
}
NUMBERED = 5
MIN_WIDTH, MIN_HEIGHT = 30, 8


@dataclass(frozen=True)
class Point:
    """One kernel row: on the plot, on the strip under it, or nowhere (`place`)."""

    label: str
    ai: float  # FLOP per DRAM byte
    flop_per_s: float
    share: float  # % of kernel time
    position: int  # row position in the frame it came from
    precision: str = ""
    # the row's own, against the peak of its precision under the roof chosen
    pct_of_peak: float = math.nan
    # where that peak comes from (the row's peak_source: report, datasheet, measured on node)
    source: str = ""
    bound: str = ""  # the ceiling that bounds it: compute, dram, l2 or l1
    # the time its limiting resource needs at that ceiling, over the time taken
    pct_of_roof: float = math.nan
    ai_l2: float = math.nan
    ai_l1: float = math.nan
    # its own FLOP ceiling: at its launches' SM clock, which need not be the run's
    peak: float = math.nan
    sm_clock_hz: float = math.nan  # its launches' SM clock (time-weighted)
    # the bandwidth it reached at the memory level that bounds it
    level_bytes_per_s: float = math.nan
    level_peak: float = math.nan  # that level's ceiling (B/s)
    # PLOT, STRIP (no FLOPs or no DRAM bytes: drawn by % of roof) or NOWHERE (unknown)
    place: str = PLOT


@dataclass(frozen=True)
class Roofline:
    # on the plot, by time share, highest first: the order the plot's ranks follow
    points: tuple[Point, ...]
    compute: tuple[Ceiling, ...]  # FLOP/s ceilings, one per precision
    dram: Ceiling | None  # B/s
    # L2 and L1 bandwidth ceilings (B/s), where the report has their peaks
    caches: tuple[Ceiling, ...] = ()
    dropped: int = 0  # rows without a finite positive AI and FLOP/s
    # of those, rows whose AI or FLOP/s is unknown (the others did no FLOPs or moved no bytes)
    unknown: int = 0
    beyond: int = 0  # rows past the limit (the smallest time shares)
    # the rows not on the plot (place STRIP or NOWHERE), by time share
    others: tuple[Point, ...] = ()

    @property
    def key(self) -> tuple:
        return (self.points, self.compute, self.dram, self.caches, self.others)

    @cached_property
    def kernels(self) -> tuple[Point, ...]:
        """Every row shown, plotted or not, by time share: the order the selection walks, as the
        table's."""
        if not self.others:
            return self.points
        return tuple(
            sorted((*self.points, *self.others), key=lambda p: (-_order_share(p), p.position))
        )

    @property
    def strip(self) -> tuple[Point, ...]:
        return tuple(p for p in self.others if p.place == STRIP)

    def plot_index(self, kernel: Point | None) -> int | None:
        """The index in `points` of a kernel on the plot (None: not on it)."""
        if kernel is None or kernel.place != PLOT:
            return None
        return next((i for i, p in enumerate(self.points) if p.position == kernel.position), None)

    def rank(self, kernel: Point) -> int:
        """1 for the largest time share among every row shown, as the table counts."""
        return next(i for i, p in enumerate(self.kernels) if p.position == kernel.position) + 1


def _order_share(p: Point) -> float:
    return -1.0 if math.isnan(p.share) else p.share


def roofline_from(
    rows: pd.DataFrame,
    ceilings: list[Ceiling],
    order: np.ndarray | None = None,
    limit: int = 500,
    name: str = "kernel",
    gpu: str | None = None,
    keep: int | None = None,
) -> Roofline:
    """Rows (all, or the positions in `order`), highest time share first, at most `limit` (more
    points only pile up on a terminal-sized plot; `keep`, a row position, is kept whatever its
    share): those with finite positive ai_dram and flop_per_s on the plot, the others beside it
    (`others`: by % of roof where they have one). In a file with launches on several GPUs, only the
    rows of one GPU (`gpu`, else the first of `roof_gpus`) against its own ceilings: a point read
    against another GPU's roof is misplaced (an A100 kernel compute bound on its own roof sits under
    an H100's ridge)."""
    candidates = np.arange(len(rows)) if order is None else np.asarray(order, dtype=np.int64)
    main = gpu or next(iter(roof_gpus(rows, ceilings, candidates)), "")
    if len({c.gpu for c in ceilings}) > 1 and "gpu" in rows:
        candidates = candidates[rows["gpu"].astype(object).to_numpy()[candidates] == main]
    ai = rows["ai_dram"].to_numpy(dtype=float, na_value=np.nan)[candidates]
    rate = rows["flop_per_s"].to_numpy(dtype=float, na_value=np.nan)[candidates]
    ok = np.isfinite(ai) & np.isfinite(rate) & (ai > 0) & (rate > 0)
    share = (
        rows["pct_time"].to_numpy(dtype=float, na_value=np.nan)
        if "pct_time" in rows
        else np.zeros(len(rows))
    )
    label_col = name if name in rows else "kernel"
    plotted, beyond = _by_share(candidates[ok], share, limit, keep)
    others, beyond_others = _by_share(candidates[~ok], share, limit, keep)
    points = tuple(_point(rows, int(p), label_col, share) for p in plotted)
    compute = tuple(c for c in ceilings if not c.bandwidth and c.gpu == main)
    dram = next((c for c in ceilings if c.name == "dram" and c.gpu == main), None)
    caches = (
        tuple(c for c in ceilings if c.name in CACHE_LINES and c.gpu == main)
        if dram is not None
        else ()
    )
    # infinite AI is known: no DRAM bytes moved
    unknown = int((np.isnan(ai) | np.isnan(rate)).sum())
    return Roofline(
        points,
        compute,
        dram,
        caches,
        dropped=int((~ok).sum()),
        unknown=unknown,
        beyond=beyond + beyond_others,
        others=tuple(_beside(_point(rows, int(p), label_col, share)) for p in others),
    )


def _by_share(
    positions: np.ndarray, share: np.ndarray, limit: int, keep: int | None
) -> tuple[np.ndarray, int]:
    """The positions by time share, highest first, cut at `limit` (keeping `keep`), and how many
    were cut."""
    positions = positions[np.argsort(-np.nan_to_num(share[positions], nan=-1.0), kind="stable")]
    if len(positions) <= limit:
        return positions, 0
    kept = positions[:limit]
    if keep is not None and keep in positions[limit:]:
        kept = np.append(kept[: limit - 1], keep) if limit else np.array([keep])
    return kept, len(positions) - len(kept)


def _beside(point: Point) -> Point:
    """A row off the plot: on the strip where its % of roof is known, else nowhere."""
    place = STRIP if point.pct_of_roof > 0 else NOWHERE
    return dataclasses.replace(point, place=place)


def roof_gpus(
    rows: pd.DataFrame, ceilings: list[Ceiling], order: np.ndarray | None = None
) -> list[str]:
    """The GPUs the rows (those in `order`) ran on, most launches first (the order of the ceilings;
    one without ceilings last); for a file on one GPU, its ceilings' one. Several: the Roofline
    screen draws one at a time."""
    gpus = list(dict.fromkeys(c.gpu for c in ceilings))
    if len(gpus) < 2 or "gpu" not in rows:
        return gpus[:1]
    names = rows["gpu"].astype(object).to_numpy()
    present = list(
        dict.fromkeys(names if order is None else names[np.asarray(order, dtype=np.int64)])
    )
    return [g for g in gpus if g in present] + sorted(
        str(g) for g in present if isinstance(g, str) and g not in gpus
    )


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
        peak=_finite(row.get("peak_flop_per_s")),
        sm_clock_hz=_finite(row.get("sm_clock_hz")),
        level_bytes_per_s=_level_rate(row),
        level_peak=_finite(row.get(f"peak_{fmt.text(row.get('roof'))}_bytes_per_s")),
    )


def _level_rate(row: pd.Series) -> float:
    """The bandwidth the row reached at the memory level that bounds it (NaN: compute-bound or
    unknown)."""
    level = fmt.text(row.get("roof"))
    if level not in ("dram", "l2", "l1"):
        return math.nan
    nbytes, duration = _finite(row.get(f"{level}_bytes")), _finite(row.get("duration_s"))
    return nbytes / duration if duration > 0 else math.nan


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


def _axes(data: Roofline) -> _Axes:
    """Decades that hold every point at its DRAM intensity and every ridge: the same whichever point
    is selected, so the plot stands still while the selection walks (the selected point's ▲ ▼ at its
    L2 and L1 intensities are drawn where they fall inside; the text under the plot gives their
    values)."""
    xs = [math.log10(p.ai) for p in data.points]
    ys = [math.log10(p.flop_per_s) for p in data.points]
    ys += [math.log10(c.value) for c in data.compute]
    if data.dram is not None:
        xs += [math.log10(c.value / data.dram.value) for c in data.compute]
    xs = xs or [-1.0, 3.0]
    ys = ys or [9.0, 13.0]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    # a third of a decade above the top line holds its label
    y0, y1 = math.floor(min(ys)), max(ys) + 0.3
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
    """The compute ceiling whose ridge gets a label: the selected kernel's precision (the first
    named, for a mixed-precision kernel: 'fp64+fp32'), else the first."""
    if not data.compute or data.dram is None:
        return None
    wanted = (
        data.points[selected].precision.split("+")[0]
        if selected is not None and data.points
        else ""
    )
    return next((c for c in data.compute if c.name == wanted), data.compute[0])


def build_plot(
    data: Roofline, width: int, height: int, selected: int | None = None, color: bool = True
) -> Text:
    """The plot, exactly `width` x `height` cells. Pure: same input, same text."""
    return draw_plot(data, width, height, selected, color)[0]


def draw_plot(
    data: Roofline, width: int, height: int, selected: int | None = None, color: bool = True
) -> tuple[Text, dict[int, list[int]]]:
    """The plot and its overlaps: point index -> the points hidden in its cell (see `stack`).

    plotext draws the axes and lines; the points are written into the cells their values land in,
    one marker per cell (the selected, else the highest-ranked), then the labels (each
    compute ceiling's name at the right end of its own line, the selected precision's ridge, DRAM
    along its slope), only where they cover no point: a label that finds no such room is moved, then
    dropped."""
    # here, not at the top: its import is slow, and `open` draws no plot until `r`
    import plotext as plt

    fig = plt.figure
    fig.clear()
    # plotext caps plots at its own idea of the terminal (80x22 with no tty)
    plt.terminal.limit(False, False)
    fig.theme("simple" if color else "colorless")
    fig.plot_size(width, height)
    axes = _axes(data)
    (x0, x1), (y0, y1) = axes.x, axes.y
    # first: a run's ceiling on the same row stays on top
    _draw_own_roof(fig, data, axes, selected, color)
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
        fig.draw(
            fig.segment(
                [start, end],
                [start + bw, end + bw],
                marker=_line_marker(tint if color else None, glyph),
            )
        )
    for i, ceiling in enumerate(data.compute):
        y, left = math.log10(ceiling.value), _ceiling_start(data, ceiling, x0)
        compute_tint = COMPUTE_COLORS[i % len(COMPUTE_COLORS)] if color else None
        fig.draw(
            fig.segment(
                [left, x1],
                [y, y],
                marker=_line_marker(compute_tint, COMPUTE_GLYPHS[i % len(COMPUTE_GLYPHS)]),
            )
        )


def own_roof(data: Roofline, selected: int | None) -> float:
    """The selected point's own FLOP ceiling where no drawn ceiling is it (within 0.5%): a kernel is
    judged at its launches' SM clock, the run's ceilings are at the run's, and a mixed-precision
    kernel's peak lies between its precisions'. NaN where a drawn ceiling is its own."""
    if selected is None or not data.points:
        return math.nan
    peak = data.points[selected].peak
    if math.isnan(peak) or any(abs(c.value / peak - 1) <= OWN_ROOF_TOLERANCE for c in data.compute):
        return math.nan
    return peak


OWN_ROOF_TOLERANCE = 0.005
OWN_ROOF = "≈"  # its line's glyph: none of COMPUTE_GLYPHS, so it reads apart without colour too


def _draw_own_roof(fig, data: Roofline, axes: _Axes, selected: int | None, color: bool) -> None:
    """The selected kernel's own FLOP ceiling, dotted in its marker's colour, from its ridge to the
    right edge."""
    peak = own_roof(data, selected)
    if math.isnan(peak) or not axes.y[0] < math.log10(peak) < axes.y[1]:
        return
    y = math.log10(peak)
    left = max(axes.x[0], y - math.log10(data.dram.value)) if data.dram is not None else axes.x[0]
    fig.draw(
        fig.segment(
            [left, axes.x[1]],
            [y, y],
            marker=_line_marker(SELECTED_COLOR if color else None, OWN_ROOF),
        )
    )


def _ceiling_start(data: Roofline, ceiling: Ceiling, x0: float) -> float:
    """Where a compute ceiling's line starts (log10 AI): at its ridge with the DRAM slope, or the
    plot's left."""
    return (
        max(x0, math.log10(ceiling.value) - math.log10(data.dram.value))
        if data.dram is not None
        else x0
    )


# cells of a ceiling's line its own label must leave uncovered, or the line cannot be seen
VISIBLE_LINE = 3


HALF_BLOCKS = "▀▄▌▐▖▗▘▝▚▞▙▛▜▟█"  # what plotext's "hd" marker draws
POINT_GLYPHS = frozenset({POINT, SELECTED, *(glyph for glyph, _ in LEVEL_GLYPHS.values())})


class _Grid:
    """The drawn plot as cells: where a value lands, what a cell holds, and writing a label into
    cells.

    Where a value lands is read off the drawing itself (the rows of the y ticks, the columns of the
    x ticks, the frame), not re-derived from plotext's internals."""

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
        self.y_map = _linear(
            sorted(y_ticks, reverse=True), y_rows, (axes.y[1], axes.y[0]), self.rows
        )
        self.x_map = _linear(sorted(x_ticks), x_cols, axes.x, self.cols)

    def row_of(self, y: float) -> int:
        return round(self.y_map(y))

    def col_of(self, x: float) -> int:
        return round(self.x_map(x))

    def y_at(self, row: int) -> float:
        """The value (log10) a row stands for."""
        return self.y_map.inverse(row)

    def line_row(self, y: float, glyph: str) -> int:
        """The row a horizontal line at `y` drawn with `glyph` ended up on: its glyph at the frame's
        right edge, on the row computed or one beside it (plotext rounds half-cell pixels its own
        way)."""
        chars = HALF_BLOCKS if glyph == "hd" else glyph
        estimate = self.row_of(y)
        for row in (estimate, estimate - 1, estimate + 1):
            if self.rows[0] <= row <= self.rows[1] and self.cells[row][self.cols[1]] in chars:
                return row
        return estimate

    def inside(self, row: int, col: int, n: int) -> bool:
        return (
            self.rows[0] <= row <= self.rows[1]
            and self.cols[0] <= col
            and col + n - 1 <= self.cols[1]
        )

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


def _linear(
    ticks: list[int], at: list[int], span: tuple[float, float], cells: tuple[int, int]
) -> _Linear:
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

    # Each compute ceiling: its name at the right end of its own line; on the row above or below
    # when a point (or another ceiling's name) is there, or when the name would cover all of a short
    # line (a high ceiling whose ridge is far right); dropped when neither has room.
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
    # a ridge is only ever where there is a DRAM slope
    if ridge is not None and data.dram is not None:
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
    """`DRAM` (`L2`, `L1`) left of its slope, a blank cell between, about a third of the way up the
    slope; right of it (under the roof) where another slope leaves no room on the left."""
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
    """The precision a point is drawn as: the first of a mixed kernel's (`fp64+fp32`: its larger
    FLOP share)."""
    return point.precision.split("+")[0].lower()


def point_style(data: Roofline, point: Point) -> tuple[str, int]:
    """(glyph, 256-colour index) of a point by its precision: the colour of that precision's compute
    ceiling."""
    precision = precision_of(point)
    tint = next(
        (
            COMPUTE_COLORS[i % len(COMPUTE_COLORS)]
            for i, c in enumerate(data.compute)
            if c.name.lower() == precision
        ),
        POINT_COLOR,
    )
    return PRECISION_GLYPHS.get(precision.removeprefix("tensor_"), POINT), tint  # TC BF16 too: `+`


def numbered(data: Roofline) -> dict[int, int]:
    """Plotted points drawn as their rank (1 = the largest time share of every row shown, as the
    table's order): point index -> rank, for the ranks up to NUMBERED that are on the plot."""
    kernels = data.kernels
    if len(kernels) < 2:
        return {}
    top = {k.position: rank for rank, k in enumerate(kernels[:NUMBERED], start=1)}
    return {i: top[p.position] for i, p in enumerate(data.points) if p.position in top}


def stack(cells: list[tuple[int, int]], selected: int | None) -> dict[int, list[int]]:
    """Points that land in one cell: the one drawn (the selected, else the first: points are in
    time-share order, so the highest-ranked) -> the others, hidden under it. Only cells of two or
    more points."""
    by_cell: dict[tuple[int, int], list[int]] = {}
    for i, cell in enumerate(cells):
        by_cell.setdefault(cell, []).append(i)
    out = {}
    for points in by_cell.values():
        if len(points) > 1:
            top = selected if selected in points else points[0]
            out[top] = [i for i in points if i != top]
    return out


def _draw_points(
    grid: _Grid, data: Roofline, selected: int | None, color: bool
) -> dict[int, list[int]]:
    """Each point's marker in its cell, one per cell (`stack`): its rank for the top kernels, else
    its precision's glyph, ◆ for the selected; the selected one's ▲ ▼ at its L2 and L1 intensities.
    Returns the overlaps, which the legend lists."""

    def style(index: int | None) -> Style:
        return Style(color=f"color({index})") if color and index is not None else Style()

    cells = [
        (grid.row_of(math.log10(p.flop_per_s)), grid.col_of(math.log10(p.ai))) for p in data.points
    ]
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
            glyph = str(ranks[i])
        grid.put(*cells[i], glyph, SELECTED_STYLE if i == selected and color else style(tint))
    return overlaps


def legend(
    data: Roofline,
    selected: int | None,
    color: bool = True,
    overlaps: dict[int, list[int]] | None = None,
    width: int = 80,
) -> list[tuple[str, Style]]:
    """Legend entries (glyph + text, style): drawn under the plot so it never covers a point
    (`legend_parts`)."""
    main, chosen = legend_parts(data, selected, color, overlaps, width)
    return main + chosen


def legend_parts(
    data: Roofline,
    selected: int | None,
    color: bool = True,
    overlaps: dict[int, list[int]] | None = None,
    width: int = 80,
    kernel: Point | None = None,
) -> tuple[list[tuple[str, Style]], list[tuple[str, Style]]]:
    """(entries of the plot, entries of the selection), the second on a line of its own so that
    walking the points never moves the plot. `overlaps` (from `draw_plot`): a ranked kernel says how
    many points its marker hides (`+2`) or which marker hides it (`under 1`, `under ◆`); the points
    hidden under an unranked marker are counted in one entry. `kernel`: the selected row where it is
    not on the plot (the strip's, or none)."""
    overlaps = overlaps or {}

    def tint(index: int) -> Style:
        return Style(color=f"color({index})") if color else Style()

    entries = _ceiling_entries(data, tint)
    if data.points or data.others:
        entries += _kernel_entries(data, selected, overlaps, width, tint)
    chosen: list[tuple[str, Style]] = []
    if selected is not None and data.points:
        covered = f" +{len(overlaps[selected])}" if selected in overlaps else ""
        chosen.append((f"{SELECTED} selected{covered}", SELECTED_STYLE if color else Style()))
        p = data.points[selected]
        for level, (glyph, index) in LEVEL_GLYPHS.items():
            if not math.isnan(getattr(p, f"ai_{level}")):
                chosen.append((f"{glyph} its {level.upper()} AI", tint(index)))
        peak = own_roof(data, selected)
        if not math.isnan(peak):
            chosen.append(
                (
                    f"{OWN_ROOF} its own roof {fmt.si(peak, 'FLOP/s')}{_at_clock(p)}",
                    tint(SELECTED_COLOR),
                )
            )
    elif kernel is not None:
        where = "on the strip" if kernel.place == STRIP else "not drawn: its counters are missing"
        chosen.append((f"{SELECTED} selected: {where}", SELECTED_STYLE if color else Style()))
    return entries, chosen


def _at_clock(p: Point) -> str:
    return f" at SM {fmt.si(p.sm_clock_hz, 'Hz')}" if not math.isnan(p.sm_clock_hz) else ""


def _ceiling_entries(data: Roofline, tint) -> list[tuple[str, Style]]:
    entries = []
    if data.dram is not None:
        entries.append((f"━ {ceiling_label(data.dram)}", tint(DRAM_COLOR)))
    for cache in data.caches:
        entries.append(
            (f"{CACHE_LINES[cache.name]} {ceiling_label(cache)}", tint(LEVEL_GLYPHS[cache.name][1]))
        )
    for i, ceiling in enumerate(data.compute):
        glyph = COMPUTE_GLYPHS[i % len(COMPUTE_GLYPHS)]
        entries.append(
            (
                f"{LEGEND_GLYPHS.get(glyph, glyph)} {ceiling_label(ceiling)}",
                tint(COMPUTE_COLORS[i % len(COMPUTE_COLORS)]),
            )
        )
    return entries


def _kernel_entries(
    data: Roofline, selected: int | None, overlaps: dict[int, list[int]], width: int, tint
) -> list[tuple[str, Style]]:
    """Where the rows are (plot, strip, nowhere), the ranked kernels by name, a glyph per precision,
    and the points hidden under unranked markers."""
    under = {i: top for top, hidden in overlaps.items() for i in hidden}
    ranks = numbered(data)
    entries = [(_where(data), Style())] if data.others else []
    kernels = data.kernels
    top = kernels[:NUMBERED] if len(kernels) > 1 else ()
    # Cut where they differ from every row's name: a cut at a fixed width shows long names that
    # share a prefix (`nvjet_sm90_tst_64…`) as the same.
    cuts = distinct_cuts([k.label for k in kernels], max(18, width // 3 - 14)) if top else {}
    for rank, k in enumerate(top, start=1):
        label = cuts.get(k.label, k.label)
        share = f"{k.share:.0f}%" if k.share >= 1 else "<1%"
        i = data.plot_index(k)
        stacked = _stacked(i, overlaps, under, ranks, selected) if i is not None else _off_plot(k)
        what = fmt.precision(k.precision.split("+")[0]) or ("0 FLOP" if k.place != PLOT else "?")
        entries.append((f"{rank} {label} {what} {share}{stacked}", tint(_tint_of(data, k))))
    glyphs = dict.fromkeys(
        (precision_of(p) or "kernel", point_style(data, p))
        for i, p in enumerate(data.points)
        if i not in ranks
    )
    for name, (glyph, index) in glyphs:  # the other kernels: a glyph per precision
        entries.append((f"{glyph} {name}", tint(index)))
    # Under an unranked marker (a cell of unranked points only: a ranked one would be drawn on top).
    others = sum(
        len(hidden) for top_, hidden in overlaps.items() if top_ not in ranks and top_ != selected
    )
    if others:
        entries.append((f"+{others} under other markers", Style()))
    return entries


def _where(data: Roofline) -> str:
    """`26 on the plot · 7 on the strip (no FLOPs or no DRAM bytes: by % of roof) · 2 not drawn`."""
    strip, nowhere = len(data.strip), len(data.others) - len(data.strip)
    parts = [f"{len(data.points)} plotted"]
    if strip:
        parts.append(f"{strip} on the strip (0 FLOP or 0 DRAM B, by % of roof)")
    if nowhere:
        parts.append(f"{nowhere} not drawn (no % of roof)")
    if data.beyond:
        parts.append(f"{data.beyond} smaller not shown")
    return " · ".join(parts)


def _off_plot(k: Point) -> str:
    # a ranked row on the strip is drawn there as its rank
    return "" if k.place == STRIP else " not drawn"


def _tint_of(data: Roofline, k: Point) -> int:
    return point_style(data, k)[1] if k.place == PLOT else LEVEL_TINTS.get(k.bound, POINT_COLOR)


def _marker_of(i: int, ranks: dict[int, int], selected: int | None) -> str:
    return SELECTED if i == selected else str(ranks[i]) if i in ranks else "a marker"


def _stacked(
    i: int,
    overlaps: dict[int, list[int]],
    under: dict[int, int],
    ranks: dict[int, int],
    selected: int | None,
) -> str:
    """` +2` (points hidden under rank i's marker), ` under 1` / ` under ◆` (the marker that hides
    it)."""
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


# the strip's axis: 0.1% to 100% of roof (log10), lower where a kernel is lower
STRIP_LOW, STRIP_HIGH = -1, 2


def strip_line(data: Roofline, kernel: Point | None, width: int, color: bool = True) -> Text | None:
    """The rows off the plot (no FLOPs, or no DRAM bytes: no place on a log-log plot) on one line,
    by their % of roof on a log axis, the selected as ◆, the ranked by their rank, the others as •
    in the colour of the memory level that bounds them. None where there are none."""
    strip = data.strip
    if not strip:
        return None
    low = max(-3, min(STRIP_LOW, math.floor(min(math.log10(k.pct_of_roof) for k in strip))))
    head, left, right = "% of roof: ", f"{_pct_tick(low)}┤", "├100%"
    cells = width - len(head) - len(left) - len(right)
    if cells < 10:
        return None
    dim = Style(dim=True)
    track = [("┊" if _is_decade(c, cells, low) else " ", dim) for c in range(cells)]
    ranks = {k.position: rank for rank, k in enumerate(data.kernels[:NUMBERED], start=1)}
    chosen = kernel.position if kernel is not None and kernel.place == STRIP else None
    # Smallest share first, so that a larger one (and last the selected) is drawn over it in a
    # shared cell.
    for k in sorted(strip, key=lambda k: (k.position == chosen, _order_share(k))):
        at = (min(math.log10(k.pct_of_roof), STRIP_HIGH) - low) / (STRIP_HIGH - low)
        cell = min(cells - 1, max(0, round(at * (cells - 1))))
        glyph = (
            SELECTED
            if k.position == chosen
            else str(ranks[k.position])
            if k.position in ranks
            else POINT
        )
        tint = Style(color=f"color({LEVEL_TINTS.get(k.bound, POINT_COLOR)})") if color else Style()
        track[cell] = (glyph, SELECTED_STYLE if glyph == SELECTED and color else tint)
    line = Text(head + left, no_wrap=True)
    for glyph, style in track:
        line.append(glyph, style)
    line.append(right)
    return line


def _pct_tick(decade: int) -> str:
    return f"{10.0**decade:g}%"


def _is_decade(cell: int, cells: int, low: int) -> bool:
    """A dim tick where 1%, 10% (every decade inside the axis) fall."""
    return any(
        round((k - low) / (STRIP_HIGH - low) * (cells - 1)) == cell
        for k in range(low + 1, STRIP_HIGH)
    )


class RooflinePlot(CachedPlot):
    """Renders a `Roofline` to fit the widget: the plot, the strip of the rows off it, the legend;
    rebuilt only when size, data or selection change. The legend's height does not depend on the
    selection, so the plot stands still while the selection walks."""

    DEFAULT_CSS = "RooflinePlot { height: 1fr; min-height: 8; }"

    def __init__(
        self, data: Roofline | None = None, selected: int | None = 0, *, id: str | None = None
    ) -> None:
        """`selected`: the point drawn as selected from the start (the screen's, which need not be
        the first)."""
        super().__init__(id=id)
        self.data = data
        self.selected = selected if data is not None and data.points else None
        self.kernel: Point | None = None  # the selected row where it is off the plot

    def select(self, index: int | None, kernel: Point | None = None) -> None:
        """Select point `index` of the plot, or (None) the row `kernel` off it."""
        self.selected = index
        self.kernel = kernel if index is None else None
        self.refresh()

    def data_key(self) -> object:
        return (self.data.key, self.kernel) if self.data else None

    def draw(self, width: int, height: int, color: bool) -> Text:
        if self.data is None:
            return Text("No data yet.")
        data = self.data
        strip = strip_line(data, self.kernel, width, color)
        main_room, chosen_room = legend_room(data, width, color)
        room = main_room + chosen_room + (strip is not None)
        if width < MIN_WIDTH or height - room < MIN_HEIGHT:
            message = f"Too small for a roofline ({width}x{height}): enlarge the terminal."
            return Text(
                "\n".join(textwrap.wrap(message, max(width, 1))[: max(height, 1)]), no_wrap=True
            )
        text, overlaps = draw_plot(data, width, height - room, self.selected, color)
        main, chosen = legend_parts(data, self.selected, color, overlaps, width, self.kernel)
        extra = [strip] if strip is not None else []
        extra += legend_lines(main, width)[:main_room]
        extra += legend_lines(chosen, width)[:chosen_room] if chosen else []
        for line in extra:
            text.append("\n")
            text.append_text(line)
        text.no_wrap, text.overflow = True, "crop"
        return text


def legend_room(data: Roofline, width: int, color: bool = True) -> tuple[int, int]:
    """(lines for the plot's entries, lines for the selection's) under a plot of `width`: the same
    whichever row is selected, so the plot above them never moves."""
    return len(legend_lines(_worst_case(data, color, width), width)), (
        1 if data.points or data.others else 0
    )


def below_plot(data: Roofline, width: int, kernel: Point | None = None, color: bool = True) -> int:
    """How many lines the strip and the legend take under the plot."""
    return sum(legend_room(data, width, color)) + (
        strip_line(data, kernel, width, color) is not None
    )


def _worst_case(data: Roofline, color: bool, width: int) -> list[tuple[str, Style]]:
    """The plot's entries as long as overlaps can make them (every ranked point `under a marker`, a
    count of hidden points), so the lines kept for them hold whatever the selection hides."""
    return legend_parts(data, None, color, {-1: list(range(len(data.points)))}, width)[0]
