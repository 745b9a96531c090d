"""`flopscope diff A B` in the app: two runs side by side, kernel group by kernel group, largest
change first.

The table is the one every other screen uses (KernelTable): numbers right-aligned, columns fitted to
the width (at 80 columns the times, change and ratio stay beside the name; `left`/`right` bring back
each column that was dropped), `s` sorts by the column under the cursor, `/` filters by name,
`enter` shows the group of run A and of run B side by side (a group one run ran: that run's Kernel
screen). The export writes every column of the rows as shown."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pandas as pd
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from ....core import Report
from ....core.analysis import (
    ceilings_apart,
    diff_runs,
    gpus_apart,
    group_key,
    groups_of,
    key_values,
)
from ....core.common import display_text
from ....core.table.module_tree import with_public_paths
from ...presentation.columns import Column
from ...presentation.diff_text import diff_meta, table_rows, totals_line
from ...presentation.table_model import TableModel
from ..widgets.footer import KeyFooter
from ..widgets.kernel_table import KernelTable
from .export import ask_export
from .kernel import KernelScreen
from .kernel_pair import KernelPairScreen
from .keys import BACK, EXPORT, FILTER, GROUP, SORT
from .table_columns import diff_columns
from .table_screen import TableScreen

# Columns the screen adds to diff_runs' rows for display only (the export leaves them out).
SHOWN_ONLY = ["time_ratio", "only_in"]


def gpu_lines(
    names: tuple[str, str],
    gpus: tuple[str | None, str | None],
    reports: tuple[Report, Report] | None = None,
) -> list[str]:
    """`A = name (GPU) · B = name (GPU)`, and a warning when the two did not run on the same GPUs
    (each run's devices from `reports`, else its GPU label) or are judged against different
    ceilings."""
    (a, b), (gpu_a, gpu_b) = names, gpus
    lines = [f"A = {a} ({gpu_a or 'GPU unknown'}) · B = {b} ({gpu_b or 'GPU unknown'})"]
    devices = [r.gpu_names for r in reports] if reports else [[g] if g else [] for g in gpus]
    for apart in (gpus_apart(*devices), ceilings_apart(*reports) if reports else None):
        if apart:
            lines.append(f"! {apart}")
    return lines


GROUPS = {"name": "nvtx", "nvtx": "name", "module": "name"}  # what `g` compares by next


class DiffScreen(TableScreen):
    NOUN = "group(s)"
    NO_MATCH = "no kernel group matches"
    DEFAULT_ORDER = "largest time change first"
    FILTER_QUESTION = "Filter kernel groups:"
    NO_BOUND = "kernel groups compared have no bound: filter them by name"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="diff.open"),
        SORT,
        FILTER,
        GROUP,
        Binding("C", "choose_columns", "Columns", show=False, id="diff.columns"),
        EXPORT,
        BACK,
    ]
    CHOOSER = "diff"  # its name in config.toml's [columns]

    def __init__(
        self,
        rows: pd.DataFrame,
        name_a: str,
        name_b: str,
        gpus: tuple[str | None, str | None] = (None, None),
        reports: tuple[Report, Report] | None = None,
        ids: tuple[int | None, int | None] = (None, None),
    ) -> None:
        """`rows` from `core.diff.diff_runs`; `gpus`: the GPU each run was profiled on (None: not
        known); `reports`: the two runs, which `enter` opens a group of (without them `enter` is
        off); `ids`: the runs' store ids, which the export names beside their names."""
        super().__init__()
        self.rows = rows
        self.names = (name_a, name_b)
        self.gpus = gpus
        self.reports = reports
        self.ids = ids
        self.by = str(rows.attrs.get("by", "name"))
        self.by_gpu = bool(rows.attrs.get("by_gpu"))
        # never None here
        self.model: TableModel = TableModel(table_rows(rows), diff_columns(self.by, self.by_gpu))

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="diff-title")
        yield KernelTable(id="table")
        yield Static(id="status")
        yield KeyFooter()

    def _title(self) -> Text:
        lines = gpu_lines(self.names, self.gpus, self.reports)
        # run names and GPU names: escaped, never terminal codes
        text = Text(display_text(lines[0]))
        for warning in lines[1:]:  # bold, not colour only: legible over SSH and NO_COLOR
            text.append("\n" + display_text(warning), style="bold")
        text.append("\n" + totals_line(self.rows))
        return text

    def on_mount(self) -> None:
        self.model = self._model_for(self._chosen_columns())  # the app's choice: known once mounted
        table = self.query_one(KernelTable)
        table.set_model(self.model)
        table.focus()
        self._status()

    def _own_columns(self) -> list[Column]:
        return diff_columns(self.by, self.by_gpu)

    def _kept_columns(self) -> list[str]:
        return ["gpu"] if self.by_gpu else []  # it tells two rows of a name apart

    def _model_for(self, columns: list[Column]) -> TableModel:
        return TableModel(table_rows(self.rows), columns, self.query_state)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open", "cycle_group"):
            return self.reports is not None
        return super().check_action(action, parameters)

    # -- what is shown ----------------------------------------------------------------------------
    def shown(self) -> pd.DataFrame:
        """The rows as shown (sorted, filtered), with diff_runs' columns: what the export writes."""
        shown = self.model.shown().drop(columns=SHOWN_ONLY)
        return with_public_paths(shown) if self.by == "module" else shown

    def _status_extra(self) -> list[str]:
        # Only the grouping `g` switches to: at 80 columns the status line has no room to spare for
        # the default.
        return [f"by {self.by}"] if self.by != "name" else []

    # -- keys: TableScreen's, and these -----------------------------------------------------------
    def action_cycle_group(self) -> None:
        """Compare the runs by the other grouping (kernel name, NVTX range), as `diff --by` does."""
        if self.reports is not None:
            self.query_one("#status", Static).update(Text("comparing by " + GROUPS[self.by]))
            self._regroup(GROUPS[self.by])

    @work(thread=True, exclusive=True, group="diff-group")
    def _regroup(self, by: str) -> None:
        assert self.reports is not None  # `g` regroups only with both runs (check_action)
        rows = diff_runs(*self.reports, by=by)
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: pd.DataFrame) -> None:
        self.rows, self.by = rows, str(rows.attrs["by"])
        self.model = self._model_for(self._chosen_columns())
        self.query_one(KernelTable).set_model(self.model)
        self.query_one("#diff-title", Static).update(self._title())
        self._status()

    def action_open(self) -> None:
        row = self.current_row()
        if self.reports is None or row is None:
            return
        key = group_key(self.by)
        sides = (
            [0]
            if row["presence"] == "only in A"
            else [1]
            if row["presence"] == "only in B"
            else [0, 1]
        )
        self._open(sides, row[key], row["gpu"] if self.by_gpu else None, str(row["kernel"]))

    @work(thread=True, exclusive=True, group="diff-open")
    def _open(self, sides: list[int], key: object, gpu: str | None = None, name: str = "") -> None:
        """The group's own row of each run that ran it (grouping 100k launches takes a while: off
        the UI thread): A and B side by side where both did, else the one run's Kernel screen.
        `gpu`: the group's GPU, where groups were matched on name and GPU; `name`: the row's, as
        shown (an NVTX group's key is its stack, not for reading)."""
        found = {side: self._group_row(side, key, gpu) for side in sides}
        missing = [side for side, row in found.items() if row is None]
        if missing:
            self.app.call_from_thread(
                self.notify, f"{name} is not in run {'AB'[missing[0]]}", timeout=4, markup=False
            )
            return
        name_column = {"nvtx": "nvtx", "module": "name"}.get(self.by, "kernel")
        screen: KernelPairScreen | KernelScreen
        if len(found) == 2:
            screen = KernelPairScreen(found[0], found[1], self.names, name_column)
        else:
            side, row = next(iter(found.items()))
            # `enter` opens a group only with both runs (check_action)
            assert self.reports is not None
            report = self.reports[side]
            screen = KernelScreen(
                row, report.ceilings(), name_column, launches=report.kernels, report=report
            )
        self.app.call_from_thread(self.app.push_screen, screen)

    def _group_row(self, side: int, key: object, gpu: str | None) -> pd.Series | None:
        assert self.reports is not None  # `enter` opens a group only with both runs (check_action)
        groups = groups_of(self.reports[side], self.by)
        # by NVTX range: the stack, as diff_runs matched it (a range `a/b` is not `a` holding `b`)
        found = groups[key_values(groups, self.by).astype(object) == key]
        if gpu is not None:
            found = found[found["gpu"].astype(object).fillna("") == gpu]
        return None if found.empty else found.iloc[0]

    async def action_export(self) -> None:
        a, b = self.names
        # The runs, GPUs and totals the rows compare, as `flopscope diff --json` gives them (JSON,
        # Parquet).
        meta = diff_meta(self.rows, self.names, self.ids, self.gpus)
        await ask_export(
            self.app, self.shown, Path.cwd() / f"diff-{a}-{b}.csv", "comparison", meta=meta
        )
