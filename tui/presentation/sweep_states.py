"""Where each point of a running sweep stands, as the live sweep screen shows it: waiting, profiling
on a host, queued / running as a Slurm job, storing, done, failed or cancelled, with the time since
a host took it.

Fed by `core.sweep.run_sweep`'s callbacks (on_start, on_state, on_point), in the order its threads
call them; the caller serialises the calls (the app calls these on its own thread)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ...core.common import display_text
from . import format as fmt

WAITING, PROFILING, QUEUED, RUNNING, STORING = (
    "waiting",
    "profiling",
    "queued",
    "running",
    "storing",
)
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
OVER = (DONE, FAILED, CANCELLED)


@dataclass
class PointState:
    params: dict[str, str]
    state: str = WAITING
    host: str = ""
    detail: str = ""  # the job and its reason or node, the stored run, or the one-line error
    started: float | None = None  # time.monotonic() when a host took the point
    ended: float | None = None

    @property
    def label(self) -> str:
        return fmt.params(self.params)

    def text(self) -> str:
        """`queued (job 12: Priority)`, `running on node1 (job 12)`, `done: sweep-bs=8`, `failed:
        <error>`."""
        if not self.detail:
            return self.state
        if self.state in OVER:
            return f"{self.state}: {self.detail}"
        return (
            f"{self.state} {self.detail}"
            if self.state == RUNNING
            else f"{self.state} ({self.detail})"
        )

    def elapsed(self, now: float) -> str:
        if self.started is None:
            return ""
        return f"{(self.ended if self.ended is not None else now) - self.started:.0f} s"


class SweepStates:
    """One PointState per point, in the sweep's order, keyed by its parameters as typed."""

    def __init__(
        self, points: list[dict[str, str]], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.clock = clock
        self.points = {fmt.params(p): PointState(dict(p)) for p in points}

    def _of(self, point: dict[str, str]) -> PointState:
        return self.points.setdefault(fmt.params(point), PointState(dict(point)))

    def start(self, point: dict[str, str], host: str) -> PointState:
        """A host took the point (again, when its first host was lost)."""
        row = self._of(point)
        row.state, row.host, row.detail, row.started, row.ended = (
            PROFILING,
            host,
            "",
            self.clock(),
            None,
        )
        return row

    def job(self, point: dict[str, str], host: str, state) -> PointState:
        """A Slurm job's state (core.slurm.JobState): queued with its reason, running on its node,
        or over."""
        row = self._of(point)
        row.host = host
        if state.state == "PENDING":
            row.state, row.detail = (
                QUEUED,
                f"job {state.job}" + (f": {state.why}" if state.why else ""),
            )
        elif state.state == "RUNNING":
            row.state, row.detail = RUNNING, f"on {state.where or '?'} (job {state.job})"
        elif state.state == "COMPLETED":  # the report is copied back and stored next
            row.state, row.detail = STORING, f"job {state.job} completed"
        else:
            if state.state.startswith("CANCELLED"):
                row.state, row.detail = CANCELLED, f"job {state.job}"
            # FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY...: the point's own error follows (on_point)
            else:
                row.state, row.detail = FAILED, f"job {state.job} {state.state.lower()}"
        return row

    def result(self, result) -> PointState:
        """The point's end (core.sweep.PointResult): stored, skipped (stored by an earlier run) or
        failed."""
        row = self._of(result.params)
        row.host = result.host or row.host
        if result.status == "stored":
            row.state, row.detail = (
                DONE,
                result.run + (f" ({'; '.join(result.notes)})" if result.notes else ""),
            )
        elif result.status == "skipped":
            row.state, row.detail = DONE, "stored by an earlier run"
        elif result.error == "stopped" or row.state == CANCELLED:
            row.state, row.detail = CANCELLED, row.detail if row.state == CANCELLED else ""
        else:
            row.state, row.detail = FAILED, result.error
        if row.started is not None:
            row.ended = self.clock()
        return row

    def stop(self) -> None:
        """The user stopped the sweep: every point not over is cancelled."""
        for row in self.points.values():
            if row.state not in OVER:
                row.state, row.detail = CANCELLED, ""
                row.ended = self.clock() if row.started is not None else None

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(point, host, state, elapsed) per point, as display text (hosts and errors come from
        elsewhere)."""
        now = self.clock()
        return [
            (display_text(r.label), display_text(r.host), display_text(r.text()), r.elapsed(now))
            for r in self.points.values()
        ]

    def counts(self) -> str:
        """`3 of 8 done, 1 failed, 2 running`: the header's one line."""
        over = {s: sum(r.state == s for r in self.points.values()) for s in OVER}
        busy = sum(r.state not in (*OVER, WAITING) for r in self.points.values())
        line = f"{over[DONE]} of {len(self.points)} done"
        for what, n in ((FAILED, over[FAILED]), (CANCELLED, over[CANCELLED]), ("under way", busy)):
            if n:
                line += f", {n} {what}"
        return line
