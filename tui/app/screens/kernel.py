"""One row (a kernel group or a launch): every metric, in sections, and its place on a small
roofline."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

import pandas as pd
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Collapsible, Static
from textual.worker import get_current_worker

from ....core import FlopscopeError
from ....core.readers.opcode_mix import read_opcodes
from ....core.report import Report
from ....core.table import Ceiling
from ...presentation import format as fmt
from ...presentation.kernel_sections import row_ceilings, row_value, section_table, sections
from ...presentation.memory_diagram import memory_diagram
from ...presentation.opcode_mix import TOP, opcode_items
from ...presentation.rules import row_rule_results, rule_items, rules_table
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from ..widgets.roofline_plot import Roofline, RooflinePlot, roofline_from
from .copy_name import copy_full_name
from .export import ask_export
from .keys import BACK, COPY_NAME, EXPORT

if TYPE_CHECKING:
    from ..app import FlopscopeApp

PANELS_FROM = 120  # from this many columns, the panels sit in two columns (three from 3 x 60)
PANEL_WIDTH = 60
ROOFLINE_LINES = 20
RULES_TITLE = "ncu rules"
MEMORY_CHART = "Memory chart"  # the panel drawn as a diagram
MIX = "Instruction mix"


def panel_columns(width: int) -> int:
    return 1 if width < PANELS_FROM else max(2, min(3, width // PANEL_WIDTH))


class KernelScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        EXPORT,
        # The arrows, page keys, home and end scroll the focused body already; j/k/space as in the
        # tables.
        Binding("j", "scroll('down')", "Scroll down", show=False, id="kernel.scroll_down"),
        Binding("k", "scroll('up')", "Scroll up", show=False, id="kernel.scroll_up"),
        Binding("space", "scroll('page_down')", "Page down", show=False, id="kernel.page_down"),
        COPY_NAME,
        # tab / shift+tab walk the panels' titles, enter folds or unfolds the one focused (Textual's
        # Collapsible).
        Binding("z", "fold", "Fold all", id="kernel.fold_all"),
        Binding("v", "source", "Source", id="kernel.source"),
    ]

    def __init__(
        self,
        row: pd.Series,
        ceilings: list[Ceiling],
        name_column: str = "kernel",
        launches: pd.DataFrame | None = None,
        report: Report | None = None,
    ) -> None:
        """`launches`: the launches of the report `row` comes from (default: the app's report's),
        which the `--launch-skip` of the advice for an unprofiled launch counts; `report`: that
        report (default: the app's), whose file ncu's rule results are read from."""
        super().__init__()
        self.row = row
        self.name_column = name_column
        self.launches = launches
        self.report = report
        self.rules_read = False  # set once the "ncu rules" section shows what the file holds
        # titles of the panels folded, kept when the panels are dealt again
        self.folded: set[str] = set()
        self.rule_items: list[tuple[str, str]] | None = None  # ncu's rule results, once read
        self.mix_items: list[tuple[str, str]] = []  # the Instruction mix panel's lines, if any
        self.opcodes: list[tuple[str, str]] | None = None  # its opcode lines, once read
        self.roofline: Roofline = roofline_from(
            row.to_frame().T.infer_objects(), row_ceilings(row, ceilings), name=name_column
        )
        self.title_text = (
            fmt.text(row_value(row, name_column) or row_value(row, "kernel")) or "(unnamed)"
        )

    @property
    def crumbs(self) -> list[str]:
        """Its part of the breadcrumb (after the Kernels screen's report and grouping): the row's
        name."""
        return [self.title_text]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="kernel-title")
        # One scroll for everything; the panels in one column on a narrow terminal (the roofline
        # last), in two or three from PANELS_FROM columns on (the roofline at the top of the last),
        # each foldable.
        with VerticalScroll(id="kernel-body"), Horizontal(id="metrics"):
            for column in self._columns():
                with Vertical(classes="panel-column"):
                    yield from column
        yield KeyFooter()

    def _panels(self) -> list[tuple[int, Widget]]:
        """(estimated lines, panel) for every section, ncu's rules before the launch configuration
        (its findings on it), and the roofline."""
        out: list[tuple[int, Widget]] = []
        for title, items in sections(self.row, self._launches()):
            if title == "Launch configuration":
                rules = Static(
                    rules_table(self.rule_items or [("Launch", "reading the report…")], title=""),
                    id="rules",
                )
                out.append((12, self._panel(RULES_TITLE, rules, "panel-rules")))
            if title == MEMORY_CHART and (diagram := memory_diagram(self.row)):
                # boxes and arrows, not label/value lines
                body = Static(Text("\n".join(diagram), no_wrap=True, overflow="crop"))
                out.append((len(diagram) + 2, self._panel(title, body, "panel-memory")))
                continue
            mix = title == MIX  # its opcode lines added once read from the file
            shown = items + (self.opcodes or []) if mix else items
            body = Static(section_table("", shown), id="instruction-mix" if mix else None)
            out.append((len(items) + (TOP + 4 if mix else 2), self._panel(title, body)))
            if mix:
                self.mix_items = items
        plot: Widget = RooflinePlot(self.roofline, id="kernel-roofline")
        if not self.roofline.points:
            why = "Not on the roofline: it needs counted FLOPs and DRAM bytes (both above zero)."
            plot = Static(Text(why, style="dim"), id="kernel-roofline-none")
        out.append((ROOFLINE_LINES, self._panel("Roofline", plot, "panel-roofline")))
        return out

    def _panel(self, title: str, body: Widget, id: str | None = None) -> Collapsible:
        return Collapsible(
            body, title=title, collapsed=title in self.folded, id=id, classes="panel"
        )

    def _columns(self) -> list[list[Widget]]:
        """The panels dealt into columns, each to the shortest so far; on two or three columns the
        roofline goes first into the last, so the plot is in view beside the numbers."""
        panels = self._panels()
        count = panel_columns(self.app.size.width)
        columns: list[list[Widget]] = [[] for _ in range(count)]
        heights = [0] * count
        if count > 1:
            lines, plot = panels.pop()
            columns[-1].append(plot)
            heights[-1] = lines
        for lines, panel in panels:
            at = heights.index(min(heights))
            columns[at].append(panel)
            heights[at] += lines
        return columns

    def _launches(self) -> pd.DataFrame | None:
        report = getattr(self.app, "report", None)
        return (
            self.launches
            if self.launches is not None
            else report.kernels
            if report is not None
            else None
        )

    @work(thread=True, exclusive=True, group="kernel-rules")
    def _read_rules(self) -> None:
        """ncu's rule results for this row, read from the report file now (never part of the kernels
        table)."""
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
            self.rule_items = items
            self.query_one("#rules", Static).update(rules_table(items, title=""))
            self.rules_read = True

    @work(thread=True, exclusive=True, group="kernel-opcodes")
    def _read_opcodes(self) -> None:
        """The row's launches' warp instructions per opcode, read from the .ncu-rep now
        (ncu_report): the Instruction mix panel's last lines."""
        report = self.report if self.report is not None else getattr(self.app, "report", None)
        if report is None or report.meta.format != "ncu-rep" or not self.mix_items:
            return
        by = "nvtx" if self.name_column == "nvtx" else "name"
        ids = pd.to_numeric(report.launches_of(self.row, by)["launch_id"], errors="coerce")
        try:
            counts = read_opcodes(report.meta.source, [int(i) for i in ids.dropna()])
        except FlopscopeError as err:
            items = [("Top opcodes", str(err))]
        else:
            items = opcode_items(counts)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_opcodes, items)

    def _show_opcodes(self, items: list[tuple[str, str]]) -> None:
        self.opcodes = items
        if self.is_attached and items:
            table = section_table("", self.mix_items + items)
            self.query_one("#instruction-mix", Static).update(table)

    def on_mount(self) -> None:
        self._read_opcodes()
        self._read_rules()
        self.query_one("#kernel-body").focus()

    async def on_resize(self, event: Resize) -> None:
        """Panels dealt again where the terminal now takes another number of columns (folds
        kept)."""
        if len(self.query(".panel-column")) != panel_columns(event.size.width):
            self.folded = {str(c.title) for c in self.query(Collapsible) if c.collapsed}
            await self.recompose()
            self.query_one("#kernel-body").focus()

    def action_source(self) -> None:
        """The launch's SASS lines with ncu's warp samples (its group's longest launch)."""
        report = self.report if self.report is not None else getattr(self.app, "report", None)
        if report is None:
            self.notify("No report file behind this row", severity="warning")
            return
        if report.meta.format != "ncu-rep":
            self.notify(
                "Source lines are kept only in an .ncu-rep, not in a CSV",
                severity="warning",
                timeout=8,
            )
            return
        from .source import SourceScreen

        by = "nvtx" if self.name_column == "nvtx" else "name"
        self.app.push_screen(SourceScreen(report, self.row, by))

    def action_fold(self) -> None:
        """Fold every panel, or unfold them all where all are folded."""
        panels = list(self.query(".panel").results(Collapsible))
        fold = not all(p.collapsed for p in panels)
        for panel in panels:
            panel.collapsed = fold

    def action_back(self) -> None:
        self.dismiss()

    def action_copy_name(self) -> None:
        copy_full_name(self.app, self.row, self.name_column)

    def action_scroll(self, how: str) -> None:
        body = self.query_one("#kernel-body", VerticalScroll)
        {"down": body.scroll_down, "up": body.scroll_up, "page_down": body.scroll_page_down}[how](
            animate=False
        )

    async def action_export(self) -> None:
        launch = row_value(self.row, "launch_id")
        suffix = f"kernel-{int(launch)}" if launch is not None else "kernel"
        # `<suffix>.csv` where no report file names it (a diff's row)
        name = cast("FlopscopeApp", self.app).export_name(suffix)
        await ask_export(
            self.app,
            lambda: self.row.to_frame().T,
            name,
            what="metrics of this row",
            kernels_of_a_run=True,
        )
