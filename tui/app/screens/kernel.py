"""One row (a kernel group or a launch): every metric, in sections, and its place on a small roofline."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

import pandas as pd
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from ....core.report import Report
from ....core.table import Ceiling
from ...presentation import format as fmt
from ...presentation.kernel_sections import row_ceilings, row_value, section_table, sections
from ...presentation.rules import row_rule_results, rule_items, rules_table
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from ..widgets.roofline_plot import Roofline, RooflinePlot, roofline_from
from .copy_name import copy_full_name
from .export import ask_export
from .keys import BACK, COPY_NAME, EXPORT

if TYPE_CHECKING:
    from ..app import FlopscopeApp

WIDE = 110  # from this many columns, metrics and roofline sit side by side


class KernelScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        EXPORT,
        # The arrows, page keys, home and end scroll the focused body already; j/k/space as in the tables.
        Binding("j", "scroll('down')", "Scroll down", show=False, id="kernel.scroll_down"),
        Binding("k", "scroll('up')", "Scroll up", show=False, id="kernel.scroll_up"),
        Binding("space", "scroll('page_down')", "Page down", show=False, id="kernel.page_down"),
        COPY_NAME,
    ]

    def __init__(
        self,
        row: pd.Series,
        ceilings: list[Ceiling],
        name_column: str = "kernel",
        launches: pd.DataFrame | None = None,
        report: Report | None = None,
    ) -> None:
        """`launches`: the launches of the report `row` comes from (default: the app's report's), which the
        `--launch-skip` of the advice for an unprofiled launch counts; `report`: that report (default: the
        app's), whose file ncu's rule results are read from."""
        super().__init__()
        self.row = row
        self.name_column = name_column
        self.launches = launches
        self.report = report
        self.rules_read = False  # set once the "ncu rules" section shows what the file holds
        self.roofline: Roofline = roofline_from(
            row.to_frame().T.infer_objects(), row_ceilings(row, ceilings), name=name_column
        )
        self.title_text = fmt.text(row_value(row, name_column) or row_value(row, "kernel")) or "(unnamed)"

    @property
    def crumbs(self) -> list[str]:
        """Its part of the breadcrumb (after the Kernels screen's report and grouping): the row's name."""
        return [self.title_text]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="kernel-title")
        # One scroll for everything: narrow terminals get the metrics, then the plot below them.
        with VerticalScroll(id="kernel-body"):
            with Vertical(id="metrics"):
                for title, items in sections(self.row, self._launches()):
                    if title == "Launch configuration":  # after ncu's own figures: its findings on them
                        yield Static(rules_table([("Launch", "reading the report…")]), id="rules", classes="section")
                    yield Static(section_table(title, items), classes="section")
            yield RooflinePlot(self.roofline, id="kernel-roofline")
        yield KeyFooter()

    def _launches(self) -> pd.DataFrame | None:
        report = getattr(self.app, "report", None)
        return self.launches if self.launches is not None else report.kernels if report is not None else None

    @work(thread=True, exclusive=True, group="kernel-rules")
    def _read_rules(self) -> None:
        """ncu's rule results for this row, read from the report file now (never part of the kernels table)."""
        report = self.report if self.report is not None else getattr(self.app, "report", None)
        if report is None:
            items = [("Findings", "none: no report file behind this row")]
        else:
            by = "nvtx" if self.name_column == "nvtx" else "name"
            items = rule_items(*row_rule_results(report, self.row, by))
        if not get_current_worker().is_cancelled:  # the screen closed meanwhile
            self.app.call_from_thread(self._show_rules, items)

    def _show_rules(self, items: list[tuple[str, str]]) -> None:
        if self.is_attached:  # `escape` before the file was read: nothing left to show them in
            self.query_one("#rules", Static).update(rules_table(items))
            self.rules_read = True

    def on_mount(self) -> None:
        self._read_rules()
        self.query_one("#kernel-body").set_class(self.app.size.width < WIDE, "narrow")
        self.query_one("#kernel-body").focus()
        if not self.roofline.points:
            self.query_one(RooflinePlot).styles.display = "none"
            self.query_one("#metrics").mount(
                Static(
                    Text("Not on the roofline: it needs counted FLOPs and DRAM bytes (both above zero).", style="dim")
                )
            )

    def on_resize(self, event: Resize) -> None:
        self.query_one("#kernel-body").set_class(event.size.width < WIDE, "narrow")

    def action_back(self) -> None:
        self.dismiss()

    def action_copy_name(self) -> None:
        copy_full_name(self.app, self.row, self.name_column)

    def action_scroll(self, how: str) -> None:
        body = self.query_one("#kernel-body", VerticalScroll)
        {"down": body.scroll_down, "up": body.scroll_up, "page_down": body.scroll_page_down}[how](animate=False)

    async def action_export(self) -> None:
        launch = row_value(self.row, "launch_id")
        suffix = f"kernel-{int(launch)}" if launch is not None else "kernel"
        # `<suffix>.csv` where no report file names it (a diff's row)
        name = cast("FlopscopeApp", self.app).export_name(suffix)
        await ask_export(
            self.app, lambda: self.row.to_frame().T, name, what="metrics of this row", kernels_of_a_run=True
        )
