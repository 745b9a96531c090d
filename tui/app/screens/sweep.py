"""The Sweep screen: findings and linear fits first, then the per-point table and one metric plotted
against the swept parameter. `enter` opens the selected point's Kernels screen; `escape` there comes
back here.

The numbers are `core.scaling`'s (point_table, linear_fit, findings): the same analysis `flopscope
sweep` prints, so the app and the CLI never disagree."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widgets import Static

from ....core.analysis import Slice
from ....core.common import display_text
from ...presentation import format as fmt
from ...presentation.columns import sweep_columns
from ...presentation.sweep_analysis import FITTED, Analysis, analyse, fit_line, sweep_json
from ...presentation.table_model import Query, TableModel
from ..widgets.footer import KeyFooter
from ..widgets.kernel_table import KernelTable
from ..widgets.key_scroll import KeyScroll
from ..widgets.line_plot import LinePlot, Series
from .back import BackScreen
from .export import ask_export
from .kernels import PushedKernelsScreen
from .keys import BACK, EXPORT, FILTER
from .live_filter import LiveFilter

if TYPE_CHECKING:
    from ..app import FlopscopeApp


@dataclass(frozen=True)
class Metric:
    name: str  # point_table column
    title: str
    text: Callable[[float], str]  # a value as people read it (ticks, captions, fits)


def whole_numbers(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Counts and whole parameter values as integers (`8`, not `8.0`, in a CSV), where every known
    one is whole; unknown ones stay empty."""
    out = table.copy()
    for col in columns:
        if col in out and pd.api.types.is_numeric_dtype(out[col]):
            values = out[col].to_numpy(dtype=float, na_value=np.nan)
            known = values[~np.isnan(values)]
            if len(known) and (known == np.round(known)).all() and (np.abs(known) < 2**63).all():
                out[col] = out[col].astype("Int64")
    return out


def _si(unit: str = "") -> Callable[[float], str]:
    return lambda v: fmt.si(v, unit)


# What `m` cycles through, in order.
METRICS = (
    Metric("flop", "FLOP", _si()),
    # FLOP over the swept value, whatever it counts
    Metric("flop_per_sample", "FLOP/{param}", _si()),
    Metric("dram_bytes", "DRAM bytes", _si("B")),
    Metric("duration_s", "Time", fmt.seconds),
    Metric("flop_per_s", "FLOP/s", _si("FLOP/s")),
    Metric("flops_efficiency", "FLOP %Peak", fmt.share),
)
# the plot's least: caption, 7 rows of plot area (two y labels or more), the x axis and ticks
PLOT_ROWS = 11


def header(
    title: str, param: str, analysis: Analysis, color: bool = True, judged: str | None = None
) -> Text:
    """Name and size of the sweep (and `judged`: the --gpu whose ceilings judge the points), the
    findings (bold, `!`: legible without colour), then the fits."""
    values = analysis.table[param]
    span = f", {values.min():g} … {values.max():g}" if len(values) else ""
    against = f" · judged against {judged} ceilings (--gpu)" if judged else ""
    text = Text(
        display_text(f"Sweep {title} · {param} · {len(values)} point(s){span}{against}"),
        style="bold",
    )
    warn = "bold yellow" if color else "bold"
    for note in analysis.notes:
        text.append("\n! ", style=warn)
        # as text: a kernel name in a finding is never markup
        text.append(display_text(note), style=warn)
    if not analysis.notes:
        text.append(
            "\nNo findings: nothing flagged in how FLOPs, bytes and kernels scale.", style="dim"
        )
    for name, title_, render in FITTED:
        text.append("\n" + fit_line(title_, analysis.fits[name], param, render))
    return text


class PointsModel(TableModel):
    """The per-point table; `/`'s plain text matches a point's run and warning (its first column is
    a number)."""

    def _name_columns(self) -> list[str]:
        return [c for c in ("run", "warning") if c in self.rows]


class SweepScreen(LiveFilter, BackScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open point", id="sweep.open"),
        Binding("m", "cycle_metric", "Next metric", id="sweep.metric"),
        Binding("n", "next_line", "Next line", id="sweep.next_line"),
        FILTER,
        EXPORT,
        BACK,
    ]
    FILTER_QUESTION = "Filter points:"
    FILTER_HINT = (
        "an expression over the columns (time > 1ms, kernels > 40) or a run regex · ↑↓ recent ·"
        " empty: all"
    )
    NO_BOUND = "sweep points have no bound: filter them with an expression over their columns"
    # The plot keeps PLOT_ROWS (caption, a 7-row plot area, axes: two y labels or more); the table
    # its points up to 30% of the screen; the findings get the rest and scroll (tab focuses them)
    # when they need more.
    DEFAULT_CSS = """
    SweepScreen #sweep-header { height: auto; padding: 0 1; scrollbar-size-vertical: 1; }
    SweepScreen #sweep-plot { height: 1fr; }
    SweepScreen #sweep-status { height: auto; max-height: 2; padding: 0 1; }
    SweepScreen #sweep-filter { height: 1; padding: 0 1; display: none; }
    SweepScreen #sweep-filter.shown { display: block; }
    """
    STATUS_ROWS = 2  # the cursor row's warning in full: it may wrap once at 80 columns

    def __init__(
        self,
        lines: list[Slice],
        title: str,
        tolerance: float = 0.05,
        line: int = 0,
        judged: str | None = None,
    ) -> None:
        """`lines`: the sweep's lines (`core.scaling.slices`), `line` the one shown; `n` shows the
        next. `tolerance`: allowed drift of FLOP/param, as `flopscope sweep --tolerance`; `judged`:
        the GPU whose ceilings judge the points when --gpu was given."""
        super().__init__()
        self.lines, self.line, self.tolerance, self.judged = lines, line, tolerance, judged
        shown = lines[line]
        self.param = shown.param
        self.base_name = title
        fixed = ", ".join(f"{k}={v}" for k, v in shown.fixed.items())
        # Named with the values held fixed on this line: `prod (seq=1)`. Not `title`: that is
        # Textual's own.
        self.sweep_name = f"{title} ({fixed})" if fixed else title
        # Stable sort, as point_table's: row i of the table is points[i].
        self.points = sorted(shown.points, key=lambda p: p[0])
        self.analysis = analyse(self.points, self.param, tolerance)
        self.warned = bool(self.analysis.table["warning"].any())
        self.columns = sweep_columns(self.param, self.warned)
        self.metric = 0
        self.query_state = Query()
        self.model: TableModel | None = PointsModel(self.analysis.table, self.columns)

    # -- layout -----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Scrollable and focusable (tab): on a small terminal the findings may not all fit, and
        # there is no mouse.
        with KeyScroll(id="sweep-header"):
            yield Static(id="sweep-findings")
        yield KernelTable(id="sweep-table")
        yield Static(id="sweep-filter")  # what `/` keeps, shown while it keeps less than all
        # the Warning column is shortened to leave the numbers their room: here it is whole
        if self.warned:
            yield Static(id="sweep-status")
        yield LinePlot(id="sweep-plot")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#sweep-findings", Static).update(
            header(
                self.sweep_name,
                self.param,
                self.analysis,
                color=not self.app.no_color,
                judged=self.judged,
            )
        )
        table = self.query_one(KernelTable)
        assert self.model is not None  # made with the screen
        table.set_model(self.model)
        table.focus()
        self._fit_heights(self.app.size.height)
        self._plot()
        self._status()

    def on_resize(self, event: Resize) -> None:
        self._fit_heights(event.size.height)

    def _fit_heights(self, height: int) -> None:
        """Table: a header line and one per point, at most 30% of the screen. Findings: what the
        table, the plot's PLOT_ROWS, the footer and the status line of a sweep with warnings leave
        (at least 3 rows), scrolled beyond that."""
        table = min(len(self.points) + 1, max(3, int(0.3 * height)))
        self.query_one(KernelTable).styles.height = table
        status = (self.STATUS_ROWS if self.warned else 0) + (1 if self.filtered else 0)
        self.query_one("#sweep-header").styles.max_height = max(
            3, height - 1 - table - status - PLOT_ROWS
        )

    @property
    def selected(self) -> int | None:
        return self.query_one(KernelTable).cursor_position

    def series(self) -> Series:
        metric = METRICS[self.metric]
        table = self.analysis.table
        values = table[metric.name].to_numpy(dtype=float, na_value=math.nan)
        return Series(
            tuple(float(v) for v in table[self.param]),
            tuple(float(v) for v in values),
            self.param,
            metric.title.format(param=self.param),
            metric.text,
        )

    async def action_next_line(self) -> None:
        """Several parameters swept: the next line through the sweep (another parameter, or other
        values of the ones held fixed), in place of this one."""
        if len(self.lines) < 2:
            self.notify("this sweep has one line: one parameter varies", timeout=3)
            return
        line = (self.line + 1) % len(self.lines)
        await self.app.switch_screen(
            SweepScreen(self.lines, self.base_name, self.tolerance, line, self.judged)
        )
        self.app.notify(
            f"line {line + 1} of {len(self.lines)}: {self.lines[line].label}", timeout=3
        )

    def _plot(self) -> None:
        self.query_one(LinePlot).show(self.series(), self.selected)

    def on_kernel_table_moved(self, _: KernelTable.Moved) -> None:
        self._plot()
        self._status()

    def _requery(self, query: Query, top: bool = False) -> None:
        """The points `/` keeps (`escape` shows all again); the plot marks the cursor's point among
        all."""
        self.query_state = query
        assert self.model is not None  # made with the screen
        self.query_one(KernelTable).requery(query, top=top)
        shown = self.query_one("#sweep-filter", Static)
        text = query.text()
        shown.update(
            Text(
                display_text(
                    f"{len(self.model)}/{self.model.total} points · filter {text} · escape"
                    " shows all"
                )
            )
        )
        shown.set_class(bool(text), "shown")
        self._fit_heights(self.app.size.height)
        self._plot()
        self._status()

    def _status(self) -> None:
        """The cursor row's point, its run and, on a sweep with warnings, its own warning in
        full."""
        index = self.selected
        if not self.warned or index is None:
            return
        row = self.analysis.table.iloc[index]
        why = fmt.warning(row["warning"]) or "no warning"
        self.query_one("#sweep-status", Static).update(
            Text(display_text(f"{self.param} = {row[self.param]:g} (run {row['run']}): {why}"))
        )

    # -- actions ----------------------------------------------------------------------------------
    def action_cycle_metric(self) -> None:
        self.metric = (self.metric + 1) % len(METRICS)
        self._plot()

    async def action_open(self) -> None:
        index = self.selected
        if index is None:
            return
        value, report = self.points[index]
        label = (
            f"Sweep {self.sweep_name} · {self.param} = {value:g} (point {index + 1} of"
            f" {len(self.points)})"
        )
        app = cast("FlopscopeApp", self.app)
        await PushedKernelsScreen.open(
            app, report, label, f"{self.sweep_name}-{self.param}{value:g}"
        )

    def shown(self) -> pd.DataFrame:
        """The per-point table as shown: its columns, in its order, at full precision, then each
        point's stored run (its report file where it was not stored), so an exported row can be
        traced to what it measured."""
        shown = self.analysis.table if self.model is None else self.model.shown()  # as filtered
        table = shown[[*(c.name for c in self.columns), "run"]].reset_index(drop=True)
        return whole_numbers(table, [self.param, "launches", "kernels", "flop", "dram_bytes"])

    async def action_export(self) -> None:
        """JSON and Parquet exports carry what `open SWEEP --json` prints for this line: name, fits,
        findings."""
        meta = sweep_json(self.base_name, [self.lines[self.line]], self.tolerance, self.judged)
        await ask_export(
            self.app,
            self.shown,
            Path.cwd() / f"{self.sweep_name.replace('/', '_')}-sweep.csv",
            what="per-point table",
            meta=meta,
        )
