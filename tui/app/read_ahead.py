"""A report read in a thread from the moment `flopscope open` knows its file, while Textual is
imported and the app starts (~0.4 s on a login node): the read's Arrow parsing and file I/O let go
of the GIL, so the two overlap. No Textual here: this module is imported before it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ...core import Report

Progress = Callable[..., None]  # (done, total, unit="launches"), as read_report calls it


class ReadStopped(Exception):
    """Raised inside the read by its progress callback: the app closed (or never started) before it
    ended."""


class ReadAhead:
    """`read(progress)` running in a daemon thread from construction. The app hands its own progress
    callback to `listen` once its screen is up (the latest progress is replayed to it), waits in
    `result`, and `stop`s the read when it closes first."""

    def __init__(self, read: Callable[[Progress], Report]) -> None:
        self._read = read
        self._listener: Progress | None = None
        self._latest: tuple | None = None
        self._lock = threading.Lock()  # a listener and the progress it is replayed arrive in order
        self._stopped = threading.Event()
        self._done = threading.Event()
        self._report: Report | None = None
        self._error: BaseException | None = None
        # The terminal's stderr, taken before the read can point fd 2 at ncu_report's log sink: the
        # app draws on a duplicate of this (app._steady), not of whatever fd 2 is when Textual
        # starts.
        self.stderr_fd = os.dup(2)
        self._thread = threading.Thread(target=self._run, name="flopscope-read-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._report = self._read(self._progress)
        except BaseException as err:  # re-raised where the app waits for the report
            self._error = err
        finally:
            self._done.set()

    def _progress(self, *args) -> None:
        if self._stopped.is_set():
            raise ReadStopped
        with self._lock:
            self._latest = args
            listener = self._listener
        if listener is not None:
            listener(*args)

    def listen(self, progress: Progress) -> None:
        """Send the read's progress to `progress` from now on, starting with where it has got to."""
        with self._lock:
            self._listener, latest = progress, self._latest
        if latest is not None:
            progress(*latest)

    def ready(self) -> bool:
        """Whether the read has ended (`result` then returns at once)."""
        return self._done.is_set()

    def result(self) -> Report:
        """The report, once read; what the read raised (a FlopscopeError: the file is bad) is raised
        here."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._report is not None
        return self._report

    def stop(self) -> None:
        """End the read at its next progress call and wait for that, up to 2 s: ncu_report's load of
        a whole .ncu-rep (the fallback reader) calls none for minutes, and `q` must not wait for it
        (the thread is a daemon: it ends with the process)."""
        self._stopped.set()
        self._thread.join(timeout=2)
        os.close(self.stderr_fd)
