"""A line plot of one metric against a sweep parameter, drawn with plotext inside a Textual widget.

Same rules as the roofline (see roofline_plot.py and DESIGN.md's traps): log10 is taken here and
plotext draws on linear axes with our own tick labels, plotext's one global figure is cleared before
and after every build, and its terminal-size cap is switched off. Log-log axes are used when the
parameter spans two decades or more and every value is positive (batch sizes 1..256 read best that
way); linear axes otherwise."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text

from .roofline_plot import POINT, POINT_COLOR, SELECTED, SELECTED_COLOR, CachedPlot, decade_label

if TYPE_CHECKING:
    import plotext as plt

LINE_COLOR = 12  # 256-colour palette index, as the roofline's DRAM line
MIN_WIDTH, MIN_HEIGHT = 30, 7  # below this the axes leave no room for the line
LOG_SPAN = 100.0  # max/min of the parameter from which the axes turn log-log


@dataclass(frozen=True)
class Series:
    """One metric at every sweep point, in parameter order; NaN values are unknown and not drawn."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    x_name: str
    y_name: str
    y_text: Callable[[float], str] = field(default=lambda v: f"{v:.3g}", compare=False)

    @property
    def key(self) -> tuple:
        return (self.x, self.y, self.x_name, self.y_name)


def is_log(series: Series) -> bool:
    """Log-log when the parameter spans >= 2 decades and every known value (x and y) is positive."""
    xs = [x for x in series.x if math.isfinite(x)]
    ys = [y for y in series.y if math.isfinite(y)]
    if not xs or not ys or min(xs) <= 0 or min(ys) <= 0:
        return False
    return max(xs) / min(xs) >= LOG_SPAN


@dataclass(frozen=True)
class _Scale:
    log: bool

    def __call__(self, v: float) -> float:
        return math.log10(v) if self.log else v

    def inverse(self, v: float) -> float:
        return 10.0**v if self.log else v


def _limits(values: list[float], log: bool) -> tuple[float, float]:
    """The data range (already scaled) with 5% room either side, at least a tenth of a decade (log)
    or a tenth of the values (linear) wide: float noise in a flat series (FLOP/param) must not look
    like a trend."""
    lo, hi = min(values), max(values)
    least = 0.1 if log else 0.1 * max(abs(lo), abs(hi)) or 1.0
    if hi - lo < least:
        middle = (lo + hi) / 2
        lo, hi = middle - least / 2, middle + least / 2
    pad = (hi - lo) * 0.05
    return lo - pad, hi + pad


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round values (1, 2 or 5 times a power of ten apart) between lo and hi."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step)
    return [k * step for k in range(first, math.floor(hi / step) + 1)]


def log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Tick positions (log10 units): decades, or 1-2-5 (then 1 to 9) per decade when that still
    makes at most `most` ticks, the densest that does; round values when under a decade shows none
    of those."""
    sets = []
    for mantissas in ((1,), (1, 2, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [
            math.log10(m) + k for k in range(math.floor(lo), math.ceil(hi) + 1) for m in mantissas
        ]
        sets.append([t for t in ticks if lo <= t <= hi])
    fitting = [ticks for ticks in sets if 2 <= len(ticks) <= most]
    if fitting:
        return fitting[-1]
    if len(sets[0]) > most:
        return sets[0]  # many decades on a short axis: `spaced` keeps every other one, or fewer
    return [math.log10(v) for v in nice_ticks(10.0**lo, 10.0**hi, 4) if v > 0]


def spaced(
    positions: list[float],
    labels: list[str],
    lo: float,
    hi: float,
    cells: int,
    vertical: bool = False,
) -> tuple[list[float], list[str]]:
    """Drop ticks whose labels would touch the previous kept one, `cells` cells spanning lo..hi."""
    kept: list[tuple[float, str]] = []
    for pos, label in sorted(zip(positions, labels, strict=True)):
        at = (pos - lo) / (hi - lo) * (cells - 1)
        if kept and label == kept[-1][1]:
            continue  # the formatter rounds two ticks alike: one label, not two identical ones
        if kept:
            prev_at = (kept[-1][0] - lo) / (hi - lo) * (cells - 1)
            need = 2 if vertical else (len(kept[-1][1]) + len(label)) / 2 + 1
            if at - prev_at < need:
                continue
        kept.append((pos, label))
    return [p for p, _ in kept], [label for _, label in kept]


def _x_ticks(
    series: Series, scale: _Scale, lo: float, hi: float, cells: int
) -> tuple[list[float], list[str]]:
    """The swept values themselves when they all fit (1 2 4 8 ... reads best), else decades or round
    values."""
    values = sorted({x for x in series.x if math.isfinite(x)})
    own = ([scale(v) for v in values], [f"{v:g}" for v in values])
    if len(spaced(*own, lo, hi, cells)[0]) == len(values):
        return own
    if scale.log:
        ticks = [float(k) for k in range(math.ceil(lo), math.floor(hi) + 1)]
        return spaced(ticks, [decade_label(int(k)) for k in ticks], lo, hi, cells)
    ticks = nice_ticks(lo, hi, max(2, cells // 10))
    return spaced(ticks, [f"{v:g}" for v in ticks], lo, hi, cells)


def _y_ticks(
    series: Series, scale: _Scale, lo: float, hi: float, rows: int
) -> tuple[list[float], list[str]]:
    """Round values, spaced; never fewer than two labels (one label gives no scale): else the axis's
    ends."""
    ticks = (
        log_ticks(lo, hi, max(2, rows // 3 + 1))
        if scale.log
        else nice_ticks(lo, hi, max(3, rows // 3))
    )
    kept = spaced(ticks, [_y_label(series, scale, t) for t in ticks], lo, hi, rows, vertical=True)
    if len(kept[0]) >= 2:
        return kept
    ends = [lo, hi]
    labels = [_y_label(series, scale, t) for t in ends]
    return (ends, labels) if labels[0] != labels[1] else kept


def _y_label(series: Series, scale: _Scale, tick: float) -> str:
    return _TRAILING_ZEROS.sub(r"\1", series.y_text(scale.inverse(tick)))


# Tick values are round: '10 T', '1.5 T', not the table's fixed-digit '10.0 T', '1.50 T'.
_TRAILING_ZEROS = re.compile(r"(?:\.0+|(\.\d*?[1-9])0+)(?=\D|$)")


def _marker(symbol: str, color: int | None) -> plt.marker:
    import plotext as plt

    return plt.marker(symbol, color) if color is not None else plt.marker(symbol)


def build_line_plot(
    series: Series, width: int, height: int, selected: int | None = None, color: bool = True
) -> str:
    """The plot as text with ANSI colours, exactly `width` x `height` cells. Pure: same input, same
    text."""
    scale = _Scale(is_log(series))
    known = [
        i
        for i, (x, y) in enumerate(zip(series.x, series.y, strict=True))
        if math.isfinite(x) and math.isfinite(y) and (not scale.log or (x > 0 and y > 0))
    ]
    xs, ys = [scale(series.x[i]) for i in known], [scale(series.y[i]) for i in known]
    # The x axis spans every swept value, known y or not: cycling the metric keeps the same x axis.
    x0, x1 = _limits([scale(x) for x in series.x if math.isfinite(x)] or [0.0, 1.0], scale.log)
    y0, y1 = _limits(ys or [0.0, 1.0], scale.log)
    y_ticks = _y_ticks(series, scale, y0, y1, max(2, height - 3)) if known else ([], [])
    label_cells = max((len(label) for label in y_ticks[1]), default=1)
    x_ticks = _x_ticks(series, scale, x0, x1, max(10, width - label_cells - 3))
    import plotext as plt  # here, not at the top: its import is slow (see roofline_plot.py)

    fig = plt.figure
    fig.clear()
    # plotext caps plots at its own idea of the terminal (80x22 with no tty)
    plt.terminal.limit(False, False)
    fig.theme("simple" if color else "colorless")
    fig.plot_size(width, height)
    if known:
        _draw(fig, xs, ys, known.index(selected) if selected in known else None, color)
    else:
        fig.draw(
            fig.text(
                (x0 + x1) / 2,
                (y0 + y1) / 2,
                f"{series.y_name}: unknown at every point",
                alignment="center",
            )
        )
    fig.ruler("x").lim(x0, x1)
    fig.ruler("y").lim(y0, y1)
    fig.ruler("x").ticks(*x_ticks)
    fig.ruler("y").ticks(*y_ticks)
    out = fig.build().string()
    fig.clear()  # leave plotext's global figure empty for whoever draws next
    return out


def _draw(fig, xs: list[float], ys: list[float], selected: int | None, color: bool) -> None:
    if len(xs) > 1:
        fig.draw(fig.signal(xs, ys, marker=_marker("hd", LINE_COLOR if color else None)).lines())
    fig.draw(fig.signal(xs, ys, marker=_marker(POINT, POINT_COLOR if color else None)))
    if selected is not None:
        marker = _marker(SELECTED, SELECTED_COLOR if color else None)
        fig.draw(fig.signal([xs[selected]], [ys[selected]], marker=marker))


def caption(series: Series, selected: int | None) -> str:
    """The line above the plot: what is drawn, on which axes, and the selected point's value."""
    axes = "log-log" if is_log(series) else "linear"
    text = f"{series.y_name} vs {series.x_name} ({axes})"
    if selected is not None and 0 <= selected < len(series.x):
        y = series.y[selected]
        shown = series.y_text(y) if math.isfinite(y) else "unknown"
        text += f" · {SELECTED} {series.x_name} = {series.x[selected]:g}: {shown or 'unknown'}"
    return text


class LinePlot(CachedPlot):
    """Renders a `Series` to fit the widget, caption first; rebuilt only when size, data or
    selection change."""

    DEFAULT_CSS = "LinePlot { height: 1fr; min-height: 4; }"  # the Sweep screen keeps it taller

    def __init__(self, series: Series | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.series = series
        self.selected = 0 if series is not None and series.x else None

    def show(self, series: Series, selected: int | None) -> None:
        self.series, self.selected = series, selected
        self.refresh()

    def data_key(self) -> object:
        return self.series.key if self.series else None

    def draw(self, width: int, height: int, color: bool) -> Text:
        if self.series is None:
            return Text("No data yet.")
        head = Text(
            caption(self.series, self.selected), style="bold", no_wrap=True, overflow="ellipsis"
        )
        head.truncate(max(width, 1), overflow="ellipsis")
        if width < MIN_WIDTH or height - 1 < MIN_HEIGHT:
            message = f"Too small for the plot ({width}x{height}): enlarge the terminal."
            body = "\n".join(textwrap.wrap(message, max(width, 1))[: max(height - 1, 0)])
            return Text.assemble(head, "\n", body, no_wrap=True) if body else head
        plot = build_line_plot(self.series, width, height - 1, self.selected, color)
        text = head + Text("\n") + Text.from_ansi(plot.rstrip("\n"), no_wrap=True)
        text.no_wrap, text.overflow = True, "crop"
        return text
