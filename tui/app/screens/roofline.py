"""The roofline of the rows shown (`r`): one point per row, selected by keyboard in order of time
share. A file with launches on several GPUs shows one GPU at a time, its points against its own
ceilings; `g` goes to the next. `c` switches the roof the points are judged against:
theoretical at the measured clock, the datasheet, or the ceilings `flopscope ceilings` measured on a
node; the core judges, this screen names it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, cast

import numpy as np
import pandas as pd
from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from ....core.common import is_missing
from ....core.report import Report
from ....core.store import measured_roof
from ....core.table import CLOCK, ROOFS, Ceiling, Roof
from ...presentation import format as fmt
from ...presentation.columns import short_gpu
from ..widgets.footer import KeyFooter
from ..widgets.roofline_plot import (
    NOWHERE,
    OWN_ROOF,
    PLOT,
    Point,
    Roofline,
    RooflinePlot,
    own_roof,
    roof_gpus,
    roofline_from,
)
from .export import ask_export
from .kernel import KernelScreen
from .keys import BACK, EXPORT

if TYPE_CHECKING:
    from ..app import FlopscopeApp


def _why_none(data: Roofline) -> str:
    """Rows that did no FLOPs (or moved no DRAM bytes) have no place on a log-log plot; rows whose
    numbers are unknown lack counters, which the Kernel screen names."""
    if not data.dropped:
        return "no rows"
    parts = []
    if data.dropped > data.unknown:
        parts.append(f"{data.dropped - data.unknown} row(s) did no FLOPs or moved no DRAM bytes")
    if data.unknown:
        parts.append(
            f"{data.unknown} row(s) lack counted FLOPs or DRAM bytes (the Kernel screen, enter on a"
            " row, names the ncu --metrics that collect them)"
        )
    return "; ".join(parts)


def roof_title(roof: Roof, following: str) -> Text:
    """The roof the plot and every % on it are judged against, and the one `c` shows next."""
    what = roof.source if roof.kind == "measured" else ROOFS[roof.kind]
    return Text(
        f"Roof: {what} · c: {ROOFS[following]}", style="bold", no_wrap=True, overflow="ellipsis"
    )


def describe(data: Roofline, index: int | None, launch: int | None = None) -> RenderableType:
    """The selected row's name (verbatim, on one line: a template name would push the numbers off an
    80x24 screen) and its numbers, or why there is nothing to select. `index`: into `data.kernels`,
    every row shown (plotted or not). `launch`: the launch ID, which tells apart the launches of one
    kernel when each launch is a row."""
    kernels = data.kernels
    if index is None or not kernels:
        return Text(f"No point to plot: {_why_none(data)}.")
    p: Point = kernels[index]
    name = Text(
        f"{index + 1}/{len(kernels)} by time · ", style="bold", no_wrap=True, overflow="ellipsis"
    )
    if launch is not None:
        name.append(f"launch {launch} · ", style="bold")
    name.append(p.label)  # verbatim: `[with T = float]` is a name, not markup
    if p.place == PLOT:
        return Group(name, Text(_plotted(data, p)))
    return Group(name, Text(_off_plot(p)))


def _plotted(data: Roofline, p: Point) -> str:
    """AI, FLOP/s, share; % of its peak, which names the clock it is at where that is not the run's
    roof drawn."""
    peak = ""
    if not math.isnan(p.pct_of_peak):
        peak = f" · {fmt.pct(p.pct_of_peak)} of {fmt.ceiling(p.precision)} peak"
        own = own_roof(data, data.points.index(p))
        # not a roof drawn for the run: its own, at the clock its launches ran at
        if not math.isnan(own):
            clock = (
                f" at its SM {fmt.si(p.sm_clock_hz, 'Hz')}" if not math.isnan(p.sm_clock_hz) else ""
            )
            peak += f" {fmt.si(own, 'FLOP/s')}{clock} {OWN_ROOF}"
        elif p.source:
            peak += f" ({fmt.peak_roof(p.source)})"
    bound = f" · {fmt.roof(p.bound)}-bound" if p.bound else ""
    if p.bound and not math.isnan(p.pct_of_roof):
        bound += f", {fmt.pct(p.pct_of_roof)} of its roof"
    levels = "".join(
        f" · AI {lvl.upper()} {fmt.ratio(v)}"
        for lvl, v in (("l2", p.ai_l2), ("l1", p.ai_l1))
        if not math.isnan(v)
    )
    more = f" · {data.beyond} smaller not shown" if data.beyond else ""
    return (
        f"AI {fmt.ratio(p.ai)} FLOP/B · {fmt.si(p.flop_per_s, 'FLOP/s')} · {fmt.pct(p.share)} of"
        f" time{peak}{bound}{levels}{more}"
    )


def _off_plot(p: Point) -> str:
    """Why a row is not on the plot, and what judges it instead: the bandwidth of the level that
    bounds it."""
    share = f"{fmt.pct(p.share)} of time"
    if p.place == NOWHERE:
        return (
            f"{share} · not drawn: its FLOPs or DRAM bytes are unknown (enter: the Kernel screen"
            " names the counters)"
        )
    why = "0 FLOP" if not p.flop_per_s > 0 else "0 DRAM B"
    if p.bound in ("dram", "l2", "l1") and not math.isnan(p.level_bytes_per_s):
        judged = (
            f"{p.bound}-bound: {fmt.si(p.level_bytes_per_s, 'B/s')}, {fmt.pct(p.pct_of_roof)} of "
            f"{fmt.ceiling(p.bound)} {fmt.si(p.level_peak, 'B/s')}"
        )
    else:
        judged = f"{fmt.roof(p.bound) or 'compute'}-bound, {fmt.pct(p.pct_of_roof)} of its roof"
    return f"Strip ({why}) · {share} · {judged}"


class RooflineScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        # The points in table order (time share): the table's keys walk them the same way.
        Binding("down,j,right,l", "step(1)", "Next", id="roofline.next"),
        Binding("up,k,left,h", "step(-1)", "Previous", id="roofline.previous"),
        Binding("pagedown,space", "step(10)", "10 on", show=False, id="roofline.page_next"),
        Binding("pageup", "step(-10)", "10 back", show=False, id="roofline.page_previous"),
        Binding("home", "edge(0)", "First", show=False, id="roofline.first"),
        Binding("end", "edge(1)", "Last", show=False, id="roofline.last"),
        Binding("enter", "open", "Open", id="roofline.open"),
        Binding("g", "next_gpu", "Next GPU", id="roofline.next_gpu"),
        # clock, datasheet, measured on this node
        Binding("c", "next_roof", "Next roof", id="roofline.next_roof"),
        EXPORT,
        BACK,
    ]

    def __init__(
        self,
        rows: pd.DataFrame,
        order: np.ndarray,
        ceilings: list[Ceiling],
        name_column: str,
        suffix: str,
        at: int | None = None,
        report: Report | None = None,
    ) -> None:
        """`at`: the frame position of the row under the table's cursor: its GPU is drawn and its
        point selected (the first point where the row has none: no FLOPs, or no DRAM bytes).
        `report`: the report the rows are `report.group(suffix, time_order=False)` of, judged again
        under another roof by `c`."""
        super().__init__()
        self.report = report
        self.roof = report.roof if report is not None else CLOCK
        # looked up in the run store on first use
        self._measured: tuple[Roof | None, str] | None = None
        self.rows = rows
        self.ceilings = ceilings
        self.name_column = name_column
        self.suffix = suffix
        self.order = order
        self.gpus = roof_gpus(rows, ceilings, order)
        self.gpu = self.gpus[0] if self.gpus else None
        if at is not None and len(self.gpus) > 1 and rows["gpu"].iat[at] in self.gpus:
            self.gpu = rows["gpu"].iat[at]
        self.data = roofline_from(rows, ceilings, order, name=name_column, gpu=self.gpu, keep=at)
        # The row under the table's cursor, plotted or not (a copy has no FLOPs: it is on the
        # strip).
        at_kernel = next((i for i, p in enumerate(self.data.kernels) if p.position == at), 0)
        self.selected: int | None = at_kernel if self.data.kernels else None

    def compose(self) -> ComposeResult:
        if len(self.gpus) > 1:
            yield Static(self._gpu_title(), id="roofline-gpu")
        yield Static(roof_title(self.roof, self._following()), id="roof-title")
        plot = RooflinePlot(self.data, None, id="roofline")
        plot.select(*self._plot_selection())
        yield plot
        yield Static(self._describe(), id="point-info")
        yield KeyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return len(self.gpus) > 1 if action == "next_gpu" else True

    def _gpu_title(self) -> Text:
        """Whose points and ceilings are drawn, and which GPU `g` shows next."""
        assert self.gpu is not None  # shown only with two GPUs or more: one of them is drawn
        at = self.gpus.index(self.gpu)
        following = short_gpu(self.gpus[(at + 1) % len(self.gpus)])
        return Text(
            f"{short_gpu(self.gpu)} (GPU {at + 1} of {len(self.gpus)}): its kernels and its"
            f" ceilings · g: {following}",
            style="bold",
            no_wrap=True,
            overflow="ellipsis",
        )

    def action_next_gpu(self) -> None:
        """The next GPU's points and ceilings: each GPU's kernels are read against their own
        roof."""
        assert self.gpu is not None  # `g` works only with two GPUs or more: one of them is drawn
        self.gpu = self.gpus[(self.gpus.index(self.gpu) + 1) % len(self.gpus)]
        self.data = roofline_from(
            self.rows, self.ceilings, self.order, name=self.name_column, gpu=self.gpu
        )
        plot = self.query_one(RooflinePlot)
        plot.data = self.data
        self.query_one("#roofline-gpu", Static).update(self._gpu_title())
        self.selected = 0 if self.data.kernels else None
        plot.select(*self._plot_selection())
        self.query_one("#point-info", Static).update(self._describe())

    def _following(self) -> str:
        kinds = list(ROOFS)
        return kinds[(kinds.index(self.roof.kind) + 1) % len(kinds)]

    def action_next_roof(self) -> None:
        """The next roof: clock, datasheet, measured on a node (skipped, saying why, where none is
        stored)."""
        if self.report is None:
            self.notify("No report to judge again: these rows came without one", severity="warning")
            return
        kind = self._following()
        if kind != "measured":
            self._judge(Roof(kind))
            return
        if self._measured is None:  # a few rows of the run store, read once
            self._measured = measured_roof(self.report)
        roof, why = self._measured
        if roof is None:
            self.notify(f"No measured roof: {why}", severity="warning", timeout=8)
        self._judge(roof or CLOCK)

    @work(thread=True, exclusive=True, group="roof")
    def _judge(self, roof: Roof) -> None:
        """Every launch judged against `roof`, then grouped as the rows shown are: same rows, same
        positions, other peaks. Off the UI thread: it walks every launch, and groups them again."""
        assert self.report is not None  # action_next_roof judges only a screen that has its report
        report = self.report.against(roof)
        rows = report.group(self.suffix, time_order=False)
        self.app.call_from_thread(self._show_roof, report, rows)

    def _show_roof(self, report: Report, rows: pd.DataFrame) -> None:
        at = self.data.kernels[self.selected].position if self.selected is not None else None
        shown = self.report
        self.report, self.roof, self.rows, self.ceilings = (
            report,
            report.roof,
            rows,
            report.ceilings(),
        )
        kernels = getattr(self.app, "kernels", None)
        # The table behind follows the roof chosen, where it shows these launches (not a module's, a
        # run's).
        if kernels is not None and kernels.report is not None and kernels.report is shown:
            kernels.rejudge(report)
        self.data = roofline_from(
            rows, self.ceilings, self.order, name=self.name_column, gpu=self.gpu, keep=at
        )
        plot = self.query_one(RooflinePlot)
        plot.data = self.data
        self.selected = next(
            (i for i, p in enumerate(self.data.kernels) if p.position == at),
            0 if self.data.kernels else None,
        )
        plot.select(*self._plot_selection())
        self.query_one("#roof-title", Static).update(roof_title(self.roof, self._following()))
        self.query_one("#point-info", Static).update(self._describe())

    def action_step(self, step: int) -> None:
        if self.selected is None:
            return
        self._select(self.selected + step)

    def action_edge(self, end: int) -> None:
        if self.selected is not None:
            self._select(len(self.data.kernels) - 1 if end else 0)

    def _select(self, index: int) -> None:
        self.selected = max(0, min(index, len(self.data.kernels) - 1))
        self.query_one(RooflinePlot).select(*self._plot_selection())
        self.query_one("#point-info", Static).update(self._describe())

    def _plot_selection(self) -> tuple[int | None, Point | None]:
        """(index of the selected row among the plot's points, None off the plot; the row
        itself)."""
        if self.selected is None:
            return None, None
        kernel = self.data.kernels[self.selected]
        return self.data.plot_index(kernel), kernel

    def _describe(self) -> RenderableType:
        launch = None
        # suffix: the grouping the rows come from
        if self.suffix == "launch" and self.selected is not None:
            value = self.rows.iloc[self.data.kernels[self.selected].position].get("launch_id")
            launch = None if is_missing(value) else int(value)
        return describe(self.data, self.selected, launch)

    def action_open(self) -> None:
        if self.selected is not None:
            row = self.rows.iloc[self.data.kernels[self.selected].position]
            # judged by this roof
            self.app.push_screen(KernelScreen(row, self.ceilings, self.name_column))

    async def action_export(self) -> None:
        positions = [p.position for p in self.data.kernels]
        await ask_export(
            self.app,
            lambda: self.rows.iloc[positions].reset_index(drop=True),
            cast("FlopscopeApp", self.app).export_name(f"{self.suffix}-roofline"),
            what="rows on the roofline screen",
            kernels_of_a_run=True,
        )

    def action_back(self) -> None:
        self.dismiss()
