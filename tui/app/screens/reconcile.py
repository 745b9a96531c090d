"""`flopscope reconcile` in the app: analytic vs measured FLOPs per module, flags, and the step
figures.

The module table is the KernelTable every other table is: `j`/`k` and the page keys, `s` sorts, `/`
filters by module name, columns that do not fit drop with the `hidden:` note, and `enter` drills
down to the module's kernels (the Kernels screen of the launches its measured FLOPs come from;
`escape` comes back)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from ....core import Report
from ....core.analysis import ModelFlops, Reconciliation, module_report
from ....core.common import display_text
from ...presentation.columns import Column
from ...presentation.reconcile_table import reconcile_columns, reconcile_frame
from ...presentation.table_model import TableModel
from ..widgets.footer import KeyFooter
from ..widgets.kernel_table import KernelTable
from ..widgets.key_scroll import KeyScroll
from .export import ask_export
from .kernels import PushedKernelsScreen
from .keys import BACK, EXPORT, FILTER, SORT
from .table_screen import TableScreen


class ReconcileScreen(TableScreen):
    HELP_TITLE = "Reconcile"
    NOUN = "modules"
    NO_MATCH = "no module matches"
    DEFAULT_ORDER = "model order"
    FILTER_QUESTION = "Filter modules:"
    FILTER_HINT = "regex on the module name, case-insensitive · empty: show all"
    NO_BOUND = "modules have no bound: filter them by name"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_module", "Kernels", id="reconcile.open_module"),
        SORT,
        FILTER,
        Binding("C", "choose_columns", "Columns", show=False, id="reconcile.columns"),
        EXPORT,
        BACK,
    ]
    CHOOSER = "reconcile"  # its name in config.toml's [columns]

    def __init__(
        self,
        title: str,
        result: Reconciliation,
        lines: list[str],
        train: bool,
        depth: int | None = None,
        report: Report | None = None,
        model: ModelFlops | None = None,
    ) -> None:
        """`report` and `model`: what was reconciled, which `enter` drills into (without them
        `enter` is off)."""
        super().__init__()
        self.title_text, self.result, self.lines = title, result, lines
        # not `report`: exports look for a screen's run there
        self.measured, self.analytic = report, model
        self.train = train
        # never None
        self.model: TableModel = TableModel(
            reconcile_frame(result, depth), reconcile_columns(train)
        )

    def compose(self) -> ComposeResult:
        yield Static(Text(display_text(self.title_text), style="bold"), id="reconcile-title")
        yield KernelTable(id="table")
        yield Static(id="status")
        # tab: focused, marked, scrolled with j/k as the table is
        with KeyScroll(id="reconcile-notes"):
            yield Static(Text("\n".join(display_text(line) for line in self.lines)))
        yield KeyFooter()

    def on_mount(self) -> None:
        self.model = self._model_for(self._chosen_columns())  # the app's choice: known once mounted
        table = self.query_one(KernelTable)
        table.set_model(self.model)
        table.focus()
        self._status()

    def _own_columns(self) -> list[Column]:
        return reconcile_columns(self.train)

    def _model_for(self, columns: list[Column]) -> TableModel:
        return TableModel(self.model.rows, columns, self.query_state)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_module":
            return self.measured is not None and self.analytic is not None
        return super().check_action(action, parameters)

    def action_open_module(self) -> None:
        row = self.current_row()
        if row is not None and self.measured is not None and self.analytic is not None:
            self._open(str(row["module_name"]), str(row["module"]))

    @work(thread=True, exclusive=True, group="reconcile-open")
    def _open(self, name: str, shown: str) -> None:
        """The module's launches as a run of their own (matching every range of a big report takes a
        while)."""
        # checked by action_open_module
        assert self.measured is not None and self.analytic is not None
        report = module_report(self.measured, self.analytic, name)
        if report.kernels.empty:
            self.app.call_from_thread(
                self.notify,
                f"{shown}: no kernel of the report falls in its ranges",
                timeout=4,
                markup=False,
            )
            return
        label = f"Module {shown} · {len(report.kernels):,} launch(es)"
        stem = f"{Path(self.result.report).stem or 'reconcile'}-{name or 'model'}"
        # mypy solves Textual's `T | Awaitable[T]` callback as Awaitable[Never] for a coroutine
        # function
        self.app.call_from_thread(PushedKernelsScreen.open, self.app, report, label, stem)  # type: ignore[arg-type]

    async def action_export(self) -> None:
        # The modules as shown (sorted, filtered), named as the report's ranges name them ("" the
        # totals row).
        frame = self.model.shown().drop(columns=["module"]).rename(columns={"module_name": "name"})
        await ask_export(self.app, lambda: frame, Path.cwd() / "reconcile.csv", "module table")
