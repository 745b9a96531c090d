"""The first screen: the run summary above the kernel table, with sort, filter, grouping and
drill-down."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

import pandas as pd
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from ....core import FMA_CONVENTION, Report
from ....core.report import OverCeiling
from ....core.table import ALL, ROOFS, Ceiling
from ...presentation import format as fmt
from ...presentation.blocks import Block
from ...presentation.columns import (
    Column,
    chosen_columns,
    column_for,
    is_number_column,
    short_gpu,
    shows_speed_of_light,
    table_columns,
)
from ...presentation.names import cut_end
from ...presentation.table_model import BOUNDS, Query, TableModel
from ...presentation.text_report import header, missing_hint
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from ..widgets.kernel_details import KernelDetails
from ..widgets.kernel_table import KernelTable
from ..widgets.summary import Summary
from .copy_name import copy_full_name
from .keys import BACK, CLEAR_FILTER, COPY_NAME, EXPORT, FILTER, GROUP, SORT
from .own_columns import keep_choice
from .table_screen import TableScreen

# The screens a key opens (Kernel, Roofline, Sort, Columns, Export) are imported when it is pressed:
# the first paint waits for this module, and they bring Textual widgets of their own (OptionList,
# Input, Collapsible) and the rule results' and plots' modules.

if TYPE_CHECKING:
    from ..app import FlopscopeApp

GROUPS = ("name", "launch", "nvtx")
TABLE = "kernels"  # the table's name in config.toml's [columns]


class KernelsScreen(TableScreen):
    HELP_TITLE = "Kernels"
    CHOOSER = TABLE  # `C` offers every canonical column the rows have (action_choose_columns)
    FILTER_HINT = (
        "a name regex, bound:memory|compute|dram|l2|l1, or an expression: time > 5us and bound =="
        " dram, prec ~ tc (== != < > ~, and/or/not, units) · ↑↓ recent · empty: all"
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_row", "Open", id="kernels.open"),
        SORT,
        Binding("o", "sort_pick", "Sort…", id="kernels.sort_pick"),
        FILTER,
        Binding("b", "cycle_bound", "Bound", id="kernels.bound"),
        GROUP,
        Binding("r", "roofline", "Roofline", id="kernels.roofline"),
        Binding("C", "choose_columns", "Columns", show=False, id="kernels.columns"),
        EXPORT,
        COPY_NAME,
        CLEAR_FILTER,
    ]

    def __init__(self, by: str = "name") -> None:
        super().__init__()
        self.by = by
        self.report: Report | None = None
        self.ceilings: list[Ceiling] = []
        # (model, row, report) whose sections the details show (_show_details)
        self._details_of: tuple | None = None
        # a small report read before the app was up: shown as the screen mounts (show_now)
        self.first_report: Report | None = None

    @property
    def flopscope(self) -> FlopscopeApp:
        """The app, as the FlopscopeApp it is: the report's path, its groupings and export names
        live there."""
        return cast("FlopscopeApp", self.app)

    @property
    def crumbs(self) -> list[str]:
        """Its parts of the breadcrumb: the report, the grouping."""
        path = self.flopscope.path
        assert path is not None  # the app's own Kernels screen shows the report file it was given
        return [path.name, f"by {self.by}"]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="breadcrumb")
        yield Summary(id="summary")
        # the table, and on a wide terminal the row's details beside it
        with Horizontal(id="kernels-body"):
            yield KernelTable(id="table")
            yield KernelDetails(id="details")
        yield Static(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(KernelDetails).fit(self.app.size.width)
        table = self.query_one(KernelTable)
        table.loading = True
        table.focus()
        self.query_one(Summary).show([Block([f"Loading {self.flopscope.path} …"])])
        self.query_one("#status", Static).update(Text("reading the report"))
        if self.first_report is not None:  # read before the app was up (FlopscopeApp.on_mount)
            self.show_now(self.first_report)

    def show_progress(self, text: str) -> None:
        """How far the report's read has got (`progress_line`), while the table is still loading."""
        if self.model is None:
            self.query_one("#status", Static).update(Text(f"reading the report: {text}"))

    # -- loading and grouping (worker threads) ----------------------------------------------------
    def start(self, report: Report) -> None:
        """The report is read: summarise it and show the first grouping, both off the UI thread."""
        self.report = report
        self._regroup(self.by)

    def rejudge(self, report: Report) -> None:
        """The same launches judged against another roof (the Roofline's `c`): the
        header's ceilings (naming their source), the table's %Peak, %Roof and Bound anew; sort,
        filter and cursor stay."""
        keep = self.query_one(KernelTable).cursor_position if self.model is not None else None
        # model None: the header is redone too
        self.flopscope.report, self.report, self.model = report, report, None
        self._regroup(self.by, keep)

    def show_now(self, report: Report) -> None:
        """`start`, on this thread: a small report's first table, drawn in the app's first
        frame."""
        self.report = report
        self._show(*self._grouped(report, self.by), self.by, keep=None)

    @work(thread=True, exclusive=True, group="group")
    def _regroup(self, by: str, keep: int | None = None) -> None:
        report = self.report
        assert report is not None  # set by start() or rejudge() before any grouping
        model, summary = self._grouped(report, by)
        worker = get_current_worker()
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_unless_cancelled, worker, model, summary, by, keep)

    def _show_unless_cancelled(
        self,
        worker: Worker,
        model: TableModel,
        summary: list[Block] | None,
        by: str,
        keep: int | None,
    ) -> None:
        # `g` pressed again meanwhile: the newer grouping wins. Asked here, on the UI thread, where
        # `regroup` cancels: a grouping shown at once (computed already) may come after this worker
        # had passed its own check.
        if not worker.is_cancelled:
            self._show(model, summary, by, keep)

    def _grouped(self, report: Report, by: str) -> tuple[TableModel, list[Block] | None]:
        """The table of `report` grouped `by`, and the header the first time (else None)."""
        summary = None
        if self.model is None:  # first time: the header too, off the UI thread like the grouping
            summary = summary_blocks(report)
            self.ceilings = report.ceilings()
        return self._model(report, self.flopscope.grouped(by), by), summary

    def _model(self, report: Report, rows: pd.DataFrame, by: str) -> TableModel:
        return TableModel(rows, self._columns(report, rows, by), self.query_state)

    def _show(
        self, model: TableModel, summary: list[Block] | None, by: str, keep: int | None
    ) -> None:
        # the first table of this report: the other groupings get ready meanwhile,
        if summary is not None:
            self.query_one(Summary).show(summary)  # the one `g` shows next first
            at = GROUPS.index(by) if by in GROUPS else -1
            # After the first paint: a grouping started now would hold the GIL while the table is
            # drawn.
            self.call_after_refresh(
                self.flopscope.warm_groupings, [*GROUPS[at + 1 :], *GROUPS[: max(at, 0)]]
            )
            if self.flopscope.modules_first:  # `open --model`: the model's view first, once
                self.flopscope.modules_first = False
                self.call_after_refresh(self.open_module_tree)
        self.by, self.model = by, model
        self.query_one(Breadcrumb).refresh()
        table = self.query_one(KernelTable)
        table.set_model(model, keep)
        table.loading = False
        self._fit_summary()
        self._status()
        self._show_details()

    def on_resize(self) -> None:
        self._fit_summary()
        self._split()

    # -- the list + details split (120 columns and wider) -----------------------------------------
    def _split(self) -> None:
        """Details beside the table from SPLIT columns on (below, `enter` opens them on a screen of
        their own)."""
        if self.query_one(KernelDetails).fit(self.app.size.width):
            self._show_details()

    def _show_details(self) -> None:
        details = self.query_one(KernelDetails)
        if details.display and self.model is not None:
            assert self.report is not None  # a model is only ever made from the report
            # The table says it moved when its columns are fitted, again when its scrollbar takes
            # their room: the same row's sections are not laid out again (each time a full frame,
            # and the first screen waited for two of them).
            model, at, report = self.model, self.query_one(KernelTable).cursor_position, self.report
            if self._details_of is not None:
                was_model, was_at, was_report = self._details_of
                if model is was_model and at == was_at and report is was_report:
                    return
            self._details_of = (model, at, report)
            row = self.current_row()
            name = self.model.columns[0].name
            details.show(row, "" if row is None else fmt.text(row.get(name)), self.report.kernels)

    def on_kernel_table_moved(self, event: KernelTable.Moved) -> None:
        super().on_kernel_table_moved(event)
        self._show_details()

    def _requery(self, query: Query, top: bool = False) -> None:
        super()._requery(query, top)  # a sort or filter can put another row under the cursor
        self._show_details()

    def _fit_summary(self) -> None:
        """The summary gets 5 lines at 24 rows (35% of the screen less 3 on taller ones), or all the
        table's rows leave (a report of five kernels needs six lines, not 65% of the screen); the
        lines that still do not fit are named by its cut marker."""
        if self.model is None:
            return
        height = self.size.height
        # its header and every row of the grouping, whatever the filter
        table = 1 + len(self.model.rows)
        chrome = sum(
            w.outer_size.height for w in (self.query_one("#status"), self.query_one(KeyFooter))
        )
        # The header, breadcrumb included: 5 lines at 24 rows (more would leave the table too few),
        # a third of taller terminals. Below 24 rows the app's own report's breadcrumb gives
        # its line to the summary (whose first line names the report too); a run opened from another
        # screen keeps its title line.
        crumb = self.query_one(Breadcrumb)
        crumb.display = height >= 24 or crumb.id == "point-title"
        third = height * 35 // 100
        header = max(third - 3, min(5, third), height - chrome - table)
        self.query_one(Summary).styles.max_height = max(1, header - (1 if crumb.display else 0))

    def _status_extra(self) -> list[str]:
        # Another roof than the default (the Roofline's `c`): said here too, as the header's
        # ceilings may be cut.
        roof = self.report.roof.kind if self.report is not None else "clock"
        return [f"by {self.by}"] + (
            [f"judged against the {ROOFS[roof]} roof"] if roof != "clock" else []
        )

    # -- sort and filter: TableScreen's, and `o`, `b` ----------------------------------------------
    def action_sort_pick(self) -> None:
        if self.model is None:
            return
        from .sort import SortScreen, sort_choices

        model = self.model
        choices, empty = sort_choices(model.table_columns, model.has_values)

        def picked(name: str | None) -> None:
            if name:
                numeric = name not in {c.name for c in model.columns if not c.numeric}
                self._requery(
                    dataclasses.replace(self.query_state, sort=name, descending=numeric), top=True
                )
                self.query_one(KernelTable).focus_column(name)  # so that `s` flips this sort

        self.app.push_screen(SortScreen(choices, self.query_state.sort, empty), picked)

    def action_cycle_bound(self) -> None:
        # A typed `bound:l2` is one kind of memory bound: `b` goes on from memory, to compute.
        now = self.query_state.bound if self.query_state.bound in BOUNDS else "memory"
        bound = BOUNDS[(BOUNDS.index(now) + 1) % len(BOUNDS)]
        self._requery(dataclasses.replace(self.query_state, bound=bound))

    # -- columns: the table's own, or as chosen (`C`, kept in config.toml)
    # ----------------------------
    def _default_columns(self, report: Report, rows: pd.DataFrame, by: str) -> list[Column]:
        return table_columns(by, isinstance(report.judged_by, dict), shows_speed_of_light(rows))

    def _columns(self, report: Report, rows: pd.DataFrame, by: str) -> list[Column]:
        chosen = self.flopscope.columns.get(TABLE)
        return chosen_columns(
            self._default_columns(report, rows, by), chosen, lambda k: is_number_column(rows, k)
        )

    def action_choose_columns(self) -> None:
        if self.model is None or self.report is None:
            return
        from .columns import Choice, ColumnsScreen

        model, report = self.model, self.report
        first = model.table_columns[0]
        default = [c.name for c in self._default_columns(report, model.rows, self.by)[1:]]
        present = [(k, u, d) for k, u, d in ALL if k in model.rows and k != first.name]
        choices = [
            Choice(k, column_for(k, is_number_column(model.rows, k)).title, u, d)
            for k, u, d in present
        ]

        def chosen(keys: list[str] | None) -> None:
            if keys is None or self.model is None or self.report is None:
                return
            self.flopscope.columns[TABLE] = keys
            keep_choice(self, TABLE, keys)
            table = self.query_one(KernelTable)
            keep = table.cursor_position
            rows = self.model.rows
            self.model = TableModel(
                rows, self._columns(self.report, rows, self.by), self.query_state
            )
            table.set_model(self.model, keep)
            self._status()

        shown = [c.name for c in model.table_columns[1:]]
        self.app.push_screen(ColumnsScreen(choices, shown, default, first.title), chosen)

    # -- other screens ----------------------------------------------------------------------------
    def action_cycle_group(self) -> None:
        """name -> launch -> NVTX range -> the module tree (a screen of its own, whose `g` comes
        back by name)."""
        if self.model is None:
            return
        if self.by == GROUPS[-1] and self.report is not None:
            self.open_module_tree()
            return
        self.regroup(GROUPS[(GROUPS.index(self.by) + 1) % len(GROUPS)])

    def open_module_tree(self) -> None:
        """The report's module tree, with the app's model FLOPs (`open --model`) where it has
        some."""
        if self.report is None:
            return
        from .module_tree import ModuleTreeScreen

        self.app.push_screen(
            ModuleTreeScreen(
                self.report,
                self.flopscope.export_name("modules"),
                flop_model=self.flopscope.flop_model,
            )
        )

    def regroup(self, by: str) -> None:
        report, rows = self.report, self.flopscope.grouped_already(by)
        if rows is not None and report is not None:
            # computed already (warm_groupings): shown in this frame, with no loading cover and no
            # worker, whose frames and thread hop take longer than the table's model
            self.workers.cancel_group(self, "group")
            self._show(self._model(report, rows, by), None, by, keep=None)
            return
        self.query_one(KernelTable).loading = True
        self.query_one("#status", Static).update(Text(f"grouping by {by} …"))
        self._regroup(by)

    def action_open_row(self) -> None:
        row = self.current_row()
        if row is not None and self.model is not None:  # a row is shown only with a model
            from .kernel import KernelScreen

            self.app.push_screen(KernelScreen(row, self.ceilings, self.model.columns[0].name))

    def action_copy_name(self) -> None:
        copy_full_name(
            self.app, self.current_row(), self.model.columns[0].name if self.model else "kernel"
        )

    def action_roofline(self) -> None:
        if self.model is None:
            return
        from .roofline import RooflineScreen

        # the cursor's row: its point selected, on its GPU's roofline
        table = self.query_one(KernelTable)
        self.app.push_screen(
            RooflineScreen(
                self.model.rows,
                self.model.order,
                self.ceilings,
                self.model.columns[0].name,
                self.by,
                at=table.cursor_position,
                report=self.report,
            )
        )

    async def action_export(self) -> None:
        if self.model is None:
            return
        from .export import ask_export

        # the rows as shown now, even if the view changes while the prompt is open
        model = self.model
        order = model.order.copy()
        await ask_export(
            self.app,
            lambda: model.rows.iloc[order].reset_index(drop=True),
            self.flopscope.export_name(self.by),
            kernels_of_a_run=True,
        )


class PushedKernelsScreen(KernelsScreen):
    """The Kernels screen of a report opened from another screen (a sweep point, a stored run):
    titled with what it shows, and `escape` goes back."""

    # KernelsScreen's escape only clears the filter (it is the app's first screen); here it also
    # goes back, after clearing a filter if one is set (TableScreen.action_back). The footer fits
    # `esc Back` by shortening, not by hiding keys.
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        *(b for b in KernelsScreen.BINDINGS if b is not CLEAR_FILTER),
    ]

    def __init__(self, label: str, by: str = "name") -> None:
        super().__init__(by)
        self.label = label

    @classmethod
    async def open(
        cls, app: FlopscopeApp, report: Report, label: str, stem: str
    ) -> PushedKernelsScreen:
        """Push the Kernels screen of `report`. KernelsScreen reads its groupings through
        `app.grouped()`, from `app.report`, and names its exports from `app.path`'s stem (`stem`):
        both are aimed at this report (the app keys its grouping cache on the report). The dummy
        suffix keeps a value like 0.5 whole in the stem."""
        app.report = report
        app.path = Path(stem.replace("/", "_") + ".report")
        screen = cls(label)
        await app.push_screen(screen)
        screen.start(report)
        return screen

    @property
    def crumbs(self) -> list[str]:
        return [self.label, f"by {self.by}"]

    def compose(self) -> ComposeResult:
        # the breadcrumb, in reverse: the run or point shown is not the app's file
        for widget in super().compose():
            yield Breadcrumb(id="point-title") if isinstance(widget, Breadcrumb) else widget


def summary_blocks(report: Report) -> list[Block]:
    """The header above the table, 5 lines at 80 columns: what ran where (bold); warnings (bold: a
    stored one, launches measured above their ceiling); the run's time and efficiencies; its FLOPs
    beside the FMA convention they follow (dim); notes, and a one-line hint when the counters the
    table needs were not collected; the ceilings, each source said once."""
    h = header(report)
    # Every block says what it holds (`what`): the line marking a cut names each one it left out.
    blocks = [
        Block(
            [f"{h.gpu}{h.named(say_report=False)}", Path(h.source).name, h.launches],
            "bold",
            what="GPU",
        )
    ]
    # second: the summary's height is capped on a short terminal, and this one must be read
    if h.warning:
        blocks.append(Block([h.warning], "bold", what="warning"))
    # Next, for the same reason: launches above their own ceiling put every % of peak below in
    # doubt.
    blocks += [_over_ceiling(w) for w in report.over_ceiling()]
    blocks += [
        Block(h.totals, what="time and efficiencies"),
        Block([h.flop], what="FLOP total"),
        Block([FMA_CONVENTION], "dim", join=True, what="FMA convention"),
    ]
    blocks += [
        Block([note], what="notes")
        for note in (h.unused_gpu, h.no_datasheet, h.not_profiled)
        if note
    ]
    hint = missing_hint(report)
    if hint:
        blocks.append(Block([hint], "bold", clip=True, what="counters to collect"))
    # Last: on a short terminal the summary's height is capped, and these are reference. One block
    # per GPU, so that the line marking the cut names whose ceilings it left out.
    return blocks + [Block(items, sep=" ", what=_whose(items[0])) for items in _per_gpu(h.ceilings)]


def _over_ceiling(w: OverCeiling) -> Block:
    """Launches above their ceiling in 3 lines at 80 columns (the CLI's whole line takes 7): how far
    above which ceiling, the worst kernel (cut), what to check first; `flopscope report` prints the
    rest."""
    many = w.launches > 1
    unit, count = ("FLOP/s", "FLOP count") if w.kind == "FLOP" else ("B/s", "DRAM byte count")
    return Block(
        [
            (
                f"Warning: {fmt.integer(w.launches)} launch{'es' if many else ''} above"
                f" {'their' if many else 'its'} {w.kind} ceiling (impossible):"
            ),
            f"{'worst ' if many else ''}{cut_end(w.kernel, 40)}",
            f"at {fmt.pct(w.pct)} of {fmt.ceiling(w.precision)} {fmt.si(w.ceiling, unit)};",
            f"the ceiling or the {count} is wrong: {w.check}",
        ],
        "bold",
        sep=" ",
        what=f"{w.kind} above ceiling",
    )


def _per_gpu(ceilings: list[str]) -> list[list[str]]:
    """The header's ceiling items, split where each GPU's start (`Ceilings, NVIDIA
    A100-PCIE-40GB:`)."""
    groups: list[list[str]] = []
    for item in ceilings:
        if item.startswith("Ceilings") or not groups:
            groups.append([])
        groups[-1].append(item)
    return groups


def _whose(first: str) -> str:
    """`Ceilings, NVIDIA A100-PCIE-40GB at SM 1.41 GHz:` -> `A100-PCIE-40GB ceilings`, as the
    table's GPU column names it."""
    gpu = (
        first.removeprefix("Ceilings")
        .removeprefix(",")
        .removesuffix(":")
        .split(" at SM ")[0]
        .strip()
    )
    return f"{short_gpu(gpu)} ceilings" if gpu else "ceilings"
