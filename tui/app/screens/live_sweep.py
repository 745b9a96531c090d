"""`flopscope sweep` in the app: each point's state (waiting, queued as a Slurm job, running on a
node, profiling, done, failed, cancelled) as the sweep goes, then the Sweep screen on what was
stored.

The sweep runs in a worker thread (core.sweep.run_sweep, started by the CLI's `job`); its callbacks
come from its own threads and reach this screen through `app.call_from_thread`. `q` or ctrl+c stops
it as Ctrl-C does on the CLI: every ncu and Slurm job it started is stopped (scancel), and the app
ends with 130."""

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
from textual.widgets import DataTable, Static

from ....core import FlopscopeError
from ....core.analysis import Slice
from ....core.common import display_text
from ....core.profiling import stop_all
from ...presentation.sweep_states import SweepStates
from ..widgets.footer import KeyFooter
from ..widgets.key_data_table import KeyDataTable
from .sweep import SweepScreen

if TYPE_CHECKING:
    from ..app import FlopscopeApp

# job(on_start, on_state, on_point, on_host_lost) -> (the stored sweep's lines, the --gpu judging
# them or None): runs the sweep with these callbacks, from a worker thread.
Job = Callable[..., tuple[list[Slice], str | None]]

COLUMNS = (("Point", "point"), ("Host", "host"), ("State", "state"), ("Elapsed", "elapsed"))
STOPPED = 130  # as Ctrl-C on the CLI


class LiveSweepScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "stop", "Stop & quit", id="livesweep.stop"),
        Binding(
            "ctrl+c", "stop", "Stop & quit", show=False, priority=True, id="livesweep.stop_ctrl_c"
        ),
    ]
    DEFAULT_CSS = """
    LiveSweepScreen #live-sweep-title, LiveSweepScreen #live-sweep-status {
        height: auto; padding: 0 1;
    }
    """

    def __init__(
        self, job: Job, points: list[dict[str, str]], title: str, tolerance: float = 0.05
    ) -> None:
        super().__init__()
        self.job = job
        self.title_text = title
        self.tolerance = tolerance
        self.states = SweepStates(points)
        self.started = time.monotonic()
        self.stopped = False  # `q` while the sweep ran: nothing more is drawn, the app is ending
        self.over = ""  # the sweep ended with nothing to show: why

    def compose(self) -> ComposeResult:
        title = f"sweep {self.title_text}: {len(self.states.points)} point(s)"
        yield Static(Text(display_text(title)), id="live-sweep-title")
        yield Static(id="live-sweep-status")
        yield KeyDataTable(id="live-sweep-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, key in COLUMNS:
            table.add_column(label, key=key)
        for key, row in zip(self.states.points, self.states.rows(), strict=True):
            table.add_row(*row, key=key)
        table.focus()
        self._draw()
        self.set_interval(1.0, self._draw)
        self._run()

    @work(thread=True, exclusive=True, group="sweep")
    def _run(self) -> None:
        try:
            lines, judged = self.job(
                on_start=lambda p, h: self._from_thread(self.states.start, p, h),
                on_state=lambda p, h, s: self._from_thread(self.states.job, p, h, s),
                on_point=lambda r: self._from_thread(self.states.result, r),
                on_host_lost=lambda h, why: self._from_thread(self._host_lost, h, why),
            )
        except FlopscopeError as err:
            self._from_thread(self._end, [], None, err.line())
            return
        self._from_thread(self._end, lines, judged, "")

    def _from_thread(self, callback, *args) -> None:
        """`callback(*args)` then a redraw, on the app's thread, unless the user stopped (the app
        may be gone)."""
        if self.stopped:
            return

        def call() -> None:
            callback(*args)
            self._draw()

        with contextlib.suppress(RuntimeError):  # the app closed between the check and the call
            self.app.call_from_thread(call)

    def _draw(self) -> None:
        table = self.query_one(DataTable)
        for key, row in zip(self.states.points, self.states.rows(), strict=True):
            # a point run_sweep names that the list did not (never expected)
            if key not in table.rows:
                table.add_row(*row, key=key)
                continue
            for (_, column), value in zip(COLUMNS, row, strict=True):
                table.update_cell(key, column, value, update_width=True)
        status = f"{time.monotonic() - self.started:.0f} s · {self.states.counts()}"
        if self.over:
            status += f" · {self.over} · q quits"
        self.query_one("#live-sweep-status", Static).update(Text(display_text(status)))

    def _host_lost(self, host: str, why: str) -> None:
        self.app.notify(
            f"dropped host {host} for the rest of the sweep ({why}); the other hosts take its"
            " points",
            severity="warning",
            timeout=10,
        )

    def _end(self, lines: list[Slice], judged: str | None, error: str) -> None:
        """The sweep is over: the Sweep screen on what was stored, or this screen saying why there
        is none."""
        if lines and lines[0].points:
            # what the Sweep screen's exports describe
            cast("FlopscopeApp", self.app).report = lines[0].points[0][1]
            self.app.switch_screen(
                SweepScreen(lines, self.title_text, self.tolerance, judged=judged)
            )
            return
        self.over = error or "no point was stored, nothing to analyse"

    def action_stop(self) -> None:
        """Quit; a sweep still running is stopped (exit code 130, as for ^C): its ncu processes end,
        its Slurm jobs are cancelled, and `flopscope sweep` then says how to resume it."""
        if self.over:
            self.app.exit(return_code=2)
            return
        self.stopped = True
        self.states.stop()
        stop_all()
        self.app.exit(return_code=STOPPED)
