"""The terminal app (`flopscope open`, `runs`, `sweep`, `diff`, `profile`, `model --reconcile`): one
App class, told which screen to open on. Screens live in screens/, widgets in widgets/.

The report is read and grouped in worker threads, so the Kernels screen (with a loading indicator)
is up before a large report has finished loading. The mouse is never captured: over SSH the terminal
keeps its own selection and copy, and every action has a key (`?` lists them)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pandas as pd
from rich.text import Text
from textual import work
from textual.app import App, SystemCommand
from textual.binding import ActiveBinding, Binding, BindingType
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import get_current_worker

from ...core import FlopscopeError, Report, read_report
from ...core.common import display_text, out_of_memory, ran_out_of_memory
from ...core.store import judged_by
from ..presentation.read_progress import ReadProgress
from .filter_history import FilterHistory
from .read_ahead import ReadAhead, ReadStopped
from .screens.kernels import KernelsScreen

if TYPE_CHECKING:  # the other screens are imported when first shown: the first paint waits less
    from ...core.analysis import ModelFlops
    from .screens.profile import ProfileScreen


# A report of at most this many launches read before the app is up is grouped for its first frame on
# the UI thread (~0.1 s at 10k launches); more are grouped in a worker under the loading cover.
FIRST_FRAME_LAUNCHES = 10_000


class SafeNotify:
    """Every notification of the app's, whatever screen sends it, as plain text with control
    characters escaped: messages quote run names, kernel names and paths, which are never markup and
    never terminal codes (a name like `[link=...]x[/link]` or an ESC in a path shows as it is
    spelled)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        text = display_text(message, keep_newlines=True)
        # the title leads the message's line, not its own
        text = f"{display_text(title)}: {text}" if title else text
        App.notify(self, text, title="", severity=severity, timeout=timeout, markup=False)  # type: ignore[arg-type]

    def message_width(self) -> int:
        """The cells a message's line holds: the screen's width less the message's left border and
        padding (app.tcss, Toast). A message of two such lines covers only the status and key
        lines."""
        return max(20, self.size.width - 3)  # type: ignore[attr-defined]


class FlopscopeApp(SafeNotify, App[None]):
    """The one App: `first` is the screen it opens on (Kernels, Runs, Sweep, Diff, Reconcile, or a
    Kernel screen in tests); every screen gets the same CSS, help, quit, notifications and keymap.

    A KernelsScreen first shows `report`, else reads `path` in a worker, else (`live`, a running
    profile) shows the profile's screen over it until ncu hands over the report. `path` also names
    exports (`<stem>-<what>.csv`); `report` is also what another first screen's exports describe (a
    sweep's first point). `keymap`: binding id -> keys, over the defaults (see keymap.py)."""

    CSS_PATH = "app.tcss"
    TITLE = "flopscope"
    # Textual's command palette (`:` or ctrl+p): every action of the screen shown, fuzzy-matched,
    # with its key.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        # help: `:, ^p`
        Binding("colon,ctrl+p", "command_palette", "Commands", show=False, id="app.commands"),
        Binding("ctrl+s", "picture", "Save picture", show=False, id="app.picture"),
    ]

    def __init__(
        self,
        first: Screen,
        *,
        path: str | Path | None = None,
        gpu: str | None = None,
        report: Report | None = None,
        live: ProfileScreen | None = None,
        keymap: Mapping[str, str] | None = None,
        columns: Mapping[str, list[str]] | None = None,
        roof: str = "clock",
        read_ahead: ReadAhead | None = None,
        history: FilterHistory | None = None,
        flop_model: ModelFlops | None = None,
    ) -> None:
        super().__init__()
        self.first = first
        self.path = Path(path) if path is not None else None
        self.gpu = gpu
        self.report = report
        self.live = live
        self.roof = roof  # what a report read here is judged against: clock, datasheet or measured
        self.read_ahead = read_ahead  # `path` being read since the command started
        self.keymap = dict(keymap or {})
        # The screen a report read here (or handed over by a live profile) is shown on; None when
        # the app opens on another screen (a run or sweep point opened from it gets its own
        # PushedKernelsScreen).
        self.kernels = first if isinstance(first, KernelsScreen) else None
        self._groups: dict[str, pd.DataFrame] = {}
        self._grouped_for: Report | None = None  # the report the cached groupings belong to
        self._group_lock = threading.Lock()
        # engine time per grouping (the benchmark reports it)
        self.group_seconds: dict[str, float] = {}
        # The table filters given, oldest first: `up` in the prompt recalls them; kept across
        # restarts where the app was given its `history` (the CLI's apps; a test's app keeps its
        # own).
        self.history = history
        self.recent_filters: list[str] = history.entries if history is not None else []
        # each table's chosen columns (column_choice.py): `C` changes them
        self.columns = dict(columns or {})
        # `open --model`: a model's analytic FLOPs, beside each module of every module tree opened;
        # the first opens over the Kernels screen as soon as the report is shown
        self.flop_model = flop_model
        self.modules_first = flop_model is not None

    def remember_filters(self) -> None:
        """Keep the filters given for the next app (a filter prompt took one); a file that cannot be
        written is said once, and the filters stay recalled in this app."""
        if self.history is None:
            return
        try:
            self.history.save()
        except OSError as exc:
            self.notify(f"Filters not kept for next time: {exc}", severity="warning", timeout=6)
            self.history = None

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette's commands: each action the screen's keys reach (its own and the app's),
        named as the footer and help name it, with its keys; then Textual's own (theme, screenshot,
        ...)."""
        keys: dict[tuple[int, str], list[str]] = {}
        actions: dict[tuple[int, str], ActiveBinding] = {}
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if active.enabled and binding.description:
                at = (id(active.node), binding.action)
                keys.setdefault(at, []).append(self.get_key_display(binding) or key)
                actions.setdefault(at, active)
        for at, active in actions.items():
            binding, shown = active.binding, ", ".join(dict.fromkeys(keys[at]))
            yield SystemCommand(
                f"{binding.description} ({shown})",
                binding.tooltip or f"press {shown} on this screen",
                partial(self.run_action, binding.action, active.node),
            )
        yield from super().get_system_commands(screen)

    async def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        read = self._read_already()
        if read is not None:
            assert self.kernels is not None  # _read_already: a Kernels screen first
            # shown by the screen as it mounts (KernelsScreen.on_mount), in the app's first frame
            self.report = self.kernels.first_report = read
        await self.push_screen(self.first)
        if self.kernels is None or read is not None:
            return
        if self.live is not None:
            await self.push_screen(self.live)
        elif self.report is None:
            self._load()
        else:
            self.kernels.start(self.report)

    def _read_already(self) -> Report | None:
        """A small report the read ahead has already read (a cached one, read while Textual was
        imported), for the Kernels screen to group on the UI thread and show in the app's first
        frame: no loading frame, no worker, no second frame to take the loading cover away. None
        where the worker must wait for the read, or will say why it failed; and for a big report,
        whose grouping would hold the screen still."""
        ahead = self.read_ahead
        if self.kernels is None or self.live is not None or ahead is None or not ahead.ready():
            return None
        try:
            report = judged_by(ahead.result(), self.roof)
        except Exception:  # the worker raises it again, and says it as the CLI does
            return None
        return report if len(report.kernels) <= FIRST_FRAME_LAUNCHES else None

    def show_report(self, report: Report) -> None:
        """A report arrived (from a live profile): the Kernels screen shows it."""
        self.report = report
        # a live profile is handed over only on a Kernels screen (on_mount)
        assert self.kernels is not None
        self.kernels.start(report)

    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        try:
            # Refused in one line, as by the CLI, where `--roof measured` has nothing stored.
            if self.read_ahead is not None:
                self.read_ahead.listen(self._load_progress())
                report = self.read_ahead.result()
            else:
                # with no report and no read-ahead, the app was given a path
                assert self.path is not None
                report = read_report(self.path, gpu=self.gpu, progress=self._load_progress())
            report = judged_by(report, self.roof)
        except ReadStopped:  # the app is closing: nothing to show
            return
        except Exception as exc:
            # The same one line as the CLI, printed after the terminal is restored; exit code 2 like
            # the CLI. The readers word running out of memory themselves; counting or deriving past
            # them can run out too.
            if not isinstance(exc, FlopscopeError) and not ran_out_of_memory(exc):
                raise
            err = exc if isinstance(exc, FlopscopeError) else out_of_memory(self.path)
            self.call_from_thread(self.exit, None, 2, Text(f"flopscope: {err.line()}"))
            return
        self.call_from_thread(self._loaded, report)

    def _load_progress(self) -> Callable[..., None]:
        """Launches read so far, on the Kernels screen's status line; stops the read once the app
        closes (a worker thread cannot be killed, and a 100k-launch read would hold the exit for a
        minute)."""
        worker = get_current_worker()
        kernels = self.kernels
        assert kernels is not None  # a report is read here only for a Kernels screen (on_mount)

        def draw(text: str) -> None:
            self.call_from_thread(kernels.show_progress, text)

        def progress(done: int, total: int, unit: str = "launches") -> None:  # unit "bytes": a CSV
            if worker.is_cancelled:
                raise ReadStopped
            shown(done, total, unit)

        shown = ReadProgress(draw)
        return progress

    def _loaded(self, report: Report) -> None:
        self.report = report
        # a report is read here only for a Kernels screen (on_mount)
        assert self.kernels is not None
        self.kernels.start(report)

    def grouped(self, by: str) -> pd.DataFrame:
        """The report grouped `by`, computed once (call from a worker thread: 1M launches take
        seconds)."""
        with self._group_lock:
            report = self.report
            assert report is not None  # grouped only once a table shows the report
            if self._grouped_for is not report:
                self._groups.clear()
                self._grouped_for = report
            if by not in self._groups:
                start = time.perf_counter()
                self._groups[by] = report.group(by, time_order=False)  # the table sorts on its own
                self.group_seconds[by] = time.perf_counter() - start
            return self._groups[by]

    def grouped_already(self, by: str) -> pd.DataFrame | None:
        """The report grouped `by` if that is computed already, else None; never waits for the
        lock, which a background grouping of another key holds for as long as it takes."""
        report, groups = self.report, self._groups
        return groups.get(by) if report is not None and self._grouped_for is report else None

    @work(thread=True, exclusive=True, group="warm")
    def warm_groupings(self, order: list[str]) -> None:
        """Group the report these ways in the background once the first table is up, so `g` then
        shows a grouping without waiting for it (100k launches: ~1 s each on a login node's
        core)."""
        for by in order:
            if get_current_worker().is_cancelled:
                return
            self.grouped(by)

    def export_name(self, suffix: str) -> Path:
        """Default export path: `<report-stem>-<suffix>.csv` in the working directory
        (`<suffix>.csv` where the app has no report file: a diff, a reconcile)."""
        return Path.cwd() / (
            f"{self.path.stem}-{suffix}.csv" if self.path is not None else f"{suffix}.csv"
        )

    def action_picture(self) -> None:
        """The screen as an SVG (Textual's own export) in the working directory, named after the
        report and the screen; written where the app runs (over SSH: on the node), its path said."""
        screen = type(self.screen).__name__.removesuffix("Screen").lower() or "screen"
        target = self.export_name(screen).with_suffix(".svg")
        try:
            written = self.save_screenshot(filename=target.name, path=str(target.parent))
        except OSError as exc:
            self.notify(
                f"Could not save the picture: {exc.strerror} ({target})",
                severity="error",
                timeout=10,
            )
            return
        self.notify(f"Saved {written}", timeout=8)

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        return _steady(driver) if driver.__name__ == "LinuxDriver" else driver


def _steady(driver: type[Driver]) -> type[Driver]:
    """The driver, drawing on a private duplicate of the terminal's stderr.

    Why: the engine points fd 2 at a temp file while ncu_report loads (its C++ layer logs there),
    and Textual draws on fd 2. With the load in a worker thread, frames drawn meanwhile would vanish
    and the screen would stay corrupt. A duplicated descriptor keeps pointing at the terminal
    whatever happens to fd 2; with a read ahead (read_ahead.py), started before the driver, it
    duplicates the terminal the read-ahead took first."""

    class SteadyDriver(driver):  # type: ignore[misc, valid-type]
        def __init__(self, app: FlopscopeApp, *args, **kwargs) -> None:
            super().__init__(app, *args, **kwargs)
            stream = sys.__stderr__
            # Textual chose the LinuxDriver: the process has a terminal's stderr
            assert stream is not None
            # reading since before Textual started: its fd 2 is taken
            ahead = getattr(app, "read_ahead", None)
            self._file = open(  # noqa: SIM115
                os.dup(ahead.stderr_fd if ahead is not None else stream.fileno()),
                "w",
                encoding=stream.encoding or "utf-8",
                errors="replace",
            )

        def close(self) -> None:
            super().close()
            self._file.close()

    return SteadyDriver


def run_app(app: FlopscopeApp) -> int:
    """Run `app` in the terminal, the mouse left to the terminal; returns the process exit code (2
    when the report cannot be read or a profile failed)."""
    app.run(mouse=False)
    return app.return_code or 0
