"""`flopscope profile` in the app: kernels appear as ncu profiles them, then the full Kernels
screen.

ncu writes its counters to the report only when the run ends, so while it runs this screen shows
what ncu announces (each kernel profiled, its replay passes, warnings, errors and the program's
output); when the report is back it is read like any file and the Kernels screen takes over."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, RichLog, Static

from ....core import FlopscopeError
from ....core.common import display_text
from ....core.ncu import Event, describe
from ....core.profiling import ProfileResult
from ..widgets.footer import KeyFooter
from ..widgets.key_data_table import KeyDataTable

if TYPE_CHECKING:
    from ..app import FlopscopeApp

# job(on_event, on_process) -> ProfileResult; raises FlopscopeError with the one-line reason.
Job = Callable[[Callable[[Event], None], Callable[[object], None]], ProfileResult]


class ProfileScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "stop", "Stop & quit", id="profile.stop"),
    ]

    def __init__(self, job: Job, title: str) -> None:
        super().__init__()
        self.job = job
        self.title_text = title
        self.started = time.monotonic()
        self.rows: dict[str, list] = {}  # kernel name -> [launches, passes]
        self.process = None
        self.failed: str | None = None
        self.stopped = False  # `q` before the report came back: the job must not store what it gets
        # ncu's errors as logged, so the failure does not log them again
        self.errors: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(Text(display_text(self.title_text)), id="profile-title")
        yield Static(id="profile-status")
        yield KeyDataTable(id="profile-table", cursor_type="row", zebra_stripes=True)
        yield RichLog(id="profile-log", max_lines=500, wrap=True, markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Kernel", key="kernel")
        table.add_column("Launches", key="launches")
        table.add_column("Passes", key="passes")
        table.focus()
        self._status("starting ncu")
        self.set_interval(0.5, self._tick)
        self._run()

    @work(thread=True, exclusive=True, group="profile")
    def _run(self) -> None:
        try:
            result = self.job(
                lambda e: self._from_thread(self._event, e), lambda p: setattr(self, "process", p)
            )
        except FlopscopeError as err:
            self._from_thread(self._fail, err)
            return
        self._from_thread(self._done, result)

    def _from_thread(self, callback, *args) -> None:
        """`callback(*args)` on the app's thread, unless the user stopped (the app may be gone by
        then)."""
        if self.stopped:
            return
        with contextlib.suppress(RuntimeError):  # the app closed between the check and the call
            self.app.call_from_thread(callback, *args)

    def _event(self, event: Event) -> None:
        if event.kind == "kernel":
            self._kernel(event)
            return
        # dim: ncu's own progress
        style = {"error": "bold", "warning": "", "output": ""}.get(event.kind, "dim")
        self.query_one(RichLog).write(Text(describe(event), style=style))
        if event.kind == "error" and event.text.strip():
            self.errors.append(event.text.strip())

    def _kernel(self, event: Event) -> None:
        table = self.query_one(DataTable)
        row = self.rows.get(event.name)
        if row is None:
            self.rows[event.name] = [1, event.passes]
            table.add_row(
                Text(display_text(event.name)), "1", str(event.passes or ""), key=event.name
            )
        else:
            row[0] += 1
            table.update_cell(event.name, "launches", str(row[0]))
        self._status(f"kernel {event.index} profiled ({event.passes or '?'} passes)")

    def _tick(self) -> None:
        if self.failed is None:
            self._status()

    def _status(self, what: str | None = None) -> None:
        if what:
            self._last = what
        launches = sum(r[0] for r in self.rows.values())
        self.query_one("#profile-status", Static).update(
            Text(
                f"{time.monotonic() - self.started:6.1f} s · {launches} launch(es),"
                f" {len(self.rows)} kernel(s) · {getattr(self, '_last', '')}"
            )
        )

    def _fail(self, err: FlopscopeError) -> None:
        """The reason, once: in the log under what ncu said (its error there already is not
        repeated), the status line saying where to look."""
        self.failed = err.line()
        self.query_one("#profile-status", Static).update(
            Text(
                f"failed after {time.monotonic() - self.started:.1f} s ({display_text(err.path)}): "
                "the reason is in the log below",
                style="bold",
            )
        )
        said = any(err.problem.strip() in e or e in err.problem for e in self.errors)
        reason = err.fix if said and err.fix else err.line()
        self.query_one(RichLog).write(
            Text(
                display_text(f"{'what to do: ' if said and err.fix else ''}{reason}"), style="bold"
            )
        )

    def _done(self, result: ProfileResult) -> None:
        for note in result.notes:
            self.app.notify(note, timeout=10)
        # a profile that came back has its report (profile() raises otherwise)
        assert result.report is not None
        cast("FlopscopeApp", self.app).show_report(result.report)
        self.dismiss()

    def action_stop(self) -> None:
        """Quit; a profile still running is stopped (exit code 130, as for ^C): `flopscope profile`
        then says so and removes its run folder if no report came back."""
        if self.failed is not None:
            self.app.exit(return_code=2)
            return
        self.stopped = True
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
        self.app.exit(return_code=130)
