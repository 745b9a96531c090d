"""The Runs screen: the run store's history, newest first. `enter` opens a run's kernels, `m` then
`d` compares two runs, `w` opens the sweep a run belongs to.

Runs are read from the store in worker threads (a 100k-launch run takes a fraction of a second to
load); each worker opens its own connection, since SQLite connections stay on the thread that made
them."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pandas as pd
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from ....core import FlopscopeError
from ....core.analysis import diff_runs, load_sweep
from ....core.store import Store, newest_first
from ...presentation import format as fmt
from ...presentation.columns import Column
from ...presentation.table_model import TableModel
from ..widgets.footer import KeyFooter
from ..widgets.kernel_table import KernelTable
from ..widgets.path_title import PathTitle
from .diff import DiffScreen
from .export import ask_export
from .kernels import PushedKernelsScreen
from .keys import CLEAR_FILTER, EXPORT, FILTER, SORT
from .sweep import SweepScreen
from .table_columns import run_columns
from .table_screen import TableScreen

SEARCHED = ["name", "gpu", "sweep", "params_text"]  # what `/` matches
# Columns runs_table adds for display only: the export writes `runs --json`'s rows, parameters as a
# dict.
SHOWN_ONLY = ["params_text", "time_at_least", "flop_at_least"]


class RunsModel(TableModel):
    """The runs as the table shows them; `/` matches a run's name, GPU, sweep and parameters, not
    only the name (the kernel table's model matches its first column)."""

    def _name_columns(self) -> list[str]:
        return [c for c in SEARCHED if c in self.rows]


def runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """`Store.runs()` as the screen shows it: newest first (as `flopscope runs` lists them), with
    SHOWN_ONLY columns: parameters as typed (`batch_size=8`, what `/` matches) and which totals read
    `≥`."""
    table = newest_first(runs)
    table["params_text"] = table["params"].map(fmt.params)
    for total, marker in (("total_time_s", "time_at_least"), ("total_flop", "flop_at_least")):
        table[marker] = [total in names for names in table["lower_bounds"]]
    return table


class RunsScreen(TableScreen):
    NOUN = "runs"
    NO_MATCH = "no runs match"
    DEFAULT_ORDER = "newest first"
    FILTER_QUESTION = "Filter runs:"
    FILTER_HINT = (
        "regex on the run's name, GPU, sweep or parameters (batch_size=8), case-insensitive ·"
        " empty: show all"
    )
    NO_BOUND = "runs have no bound: filter them by name, GPU, sweep or parameters"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="runs.open"),
        Binding("m", "mark", "Mark A", id="runs.mark"),
        Binding("d", "diff", "Diff A→row", id="runs.diff"),
        Binding("w", "sweep", "Sweep", id="runs.sweep"),
        SORT,
        FILTER,
        Binding("C", "choose_columns", "Columns", show=False, id="runs.columns"),
        EXPORT,
        CLEAR_FILTER,
    ]
    CHOOSER = "runs"  # its name in config.toml's [columns]

    def __init__(self, store_path: Path, sweep: str | None = None) -> None:
        """The runs in the store at `store_path`; only those of `sweep` if given."""
        super().__init__()
        self.store_path, self.sweep = store_path, sweep
        self.marked: str | None = None  # name of run A

    def compose(self) -> ComposeResult:
        yield PathTitle(id="runs-title")
        yield KernelTable(id="table")
        yield Static(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        with Store(self.store_path) as store:
            self.model = RunsModel(runs_table(store.runs(self.sweep)), self._chosen_columns())
            # every damaged row listed, as `flopscope runs` warns of them
            problems = dict(store.problems)
        for name, what in problems.items():
            self.notify(f"run {name}: {what}", severity="warning", timeout=8, markup=False)
        what = f"Runs of sweep {self.sweep}" if self.sweep else "Runs"
        self.query_one("#runs-title", PathTitle).show(f"{what} in ", self.store_path)
        table = self.query_one(KernelTable)
        table.set_model(self.model)
        table.focus()
        self._status()

    # -- what is shown ----------------------------------------------------------------------------
    def _own_columns(self) -> list[Column]:
        return run_columns(self.marked)

    def _model_for(self, columns: list[Column]) -> TableModel:
        assert self.model is not None  # the runs are read in on_mount, before any choice
        return RunsModel(self.model.rows, columns, self.query_state)

    def shown(self) -> pd.DataFrame:
        """The runs as shown (sorted, filtered), as `flopscope runs --json` gives them: what the
        export writes."""
        assert self.model is not None  # exported only once the runs are read (action_export)
        return self.model.shown().drop(columns=SHOWN_ONLY)

    def _status_text(self) -> str:
        assert self.model is not None  # _status writes the line only once there is a model
        if not self.model.total:
            return (
                "no runs stored yet: `flopscope profile` and `flopscope sweep` store each run they"
                " make"
            )
        return super()._status_text()

    def _status_extra(self) -> list[str]:
        return [
            f"A = {self.marked} · d compares A with the row" if self.marked else "m marks run A"
        ]

    # -- keys ------------------------------------------------------------------------------------
    def action_open(self) -> None:
        row = self.current_row()
        if row is not None:
            self._open(str(row["name"]))

    def action_mark(self) -> None:
        row = self.current_row()
        if row is not None and self.model is not None:  # a row is shown only with a model
            self.marked = None if self.marked == row["name"] else str(row["name"])
            # a new model, not the old one's cached cells: names drawn with the mark
            self._show_chosen_columns()

    def action_diff(self) -> None:
        row = self.current_row()
        if row is None:
            return
        if self.marked is None:
            self.notify("mark run A with m, then press d on run B", timeout=4)
        elif self.marked == row["name"]:
            self.notify(
                f"this is run A ({self.marked}); move to another run and press d to compare them",
                timeout=4,
                markup=False,
            )
        else:
            self._diff(self.marked, str(row["name"]))

    def action_sweep(self) -> None:
        row = self.current_row()
        if row is None:
            return
        if not row["sweep"]:
            self.notify(f"run {row['name']} is not part of a sweep", timeout=4)
            return
        self._sweep(str(row["sweep"]))

    async def action_export(self) -> None:
        if self.model is not None:
            await ask_export(
                self.app, self.shown, Path.cwd() / "flopscope-runs.csv", what="runs shown"
            )

    # -- loading from the store (worker threads) -------------------------------------------------
    @work(thread=True, exclusive=True, group="runs")
    def _open(self, name: str) -> None:
        report = self._read(lambda store: store.load(name))
        if report is not None:
            label = f"Run {name} · {report.gpu_label or 'GPU unknown'}"
            # mypy solves Textual's `T | Awaitable[T]` callback as Awaitable[Never] for a coroutine
            # function
            self.app.call_from_thread(PushedKernelsScreen.open, self.app, report, label, name)  # type: ignore[arg-type]

    @work(thread=True, exclusive=True, group="runs")
    def _diff(self, a: str, b: str) -> None:
        read = self._read(
            lambda store: (store.load(a), store.load(b), store.identify(a)[0], store.identify(b)[0])
        )
        if read is not None:
            reports, ids = read[:2], read[2:]
            gpus = tuple(r.gpu_label for r in reports)
            screen = DiffScreen(diff_runs(*reports), a, b, gpus, reports, ids)
            self.app.call_from_thread(self.app.push_screen, screen)

    @work(thread=True, exclusive=True, group="runs")
    def _sweep(self, name: str) -> None:
        def warn(message: str) -> None:
            self.app.call_from_thread(
                self.notify,
                f"flopscope: warning: {message}",
                severity="warning",
                timeout=8,
                markup=False,
            )

        lines = self._read(lambda store: load_sweep(name, store, warn))
        if lines:
            self.app.call_from_thread(self.app.push_screen, SweepScreen(lines, name))
        elif lines is not None:
            self.app.call_from_thread(self.notify, f"sweep {name}: no points to show", timeout=4)

    def _read(self, read):
        """`read(store)` on a connection of this thread; None (and a notification) if the store
        refuses."""
        self.app.call_from_thread(self.notify, "reading the store …", timeout=1)
        try:
            with Store(self.store_path) as store:
                return read(store)
        except FlopscopeError as err:
            self.app.call_from_thread(
                self.notify, err.line(), title="Cannot open", severity="error", markup=False
            )
            return None
