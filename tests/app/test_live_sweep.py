"""`flopscope sweep` in the app (issue 23.1): each point's state live as run_sweep's threads report
it, then the Sweep screen's findings. A Pilot test replays the callbacks of a Slurm sweep in their
real order; a tmux test runs a real local sweep (ncu replaced by the stand-in replaying a captured
report)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import threading
import time

import pytest
from flopscope.core.analysis.scaling import Slice
from flopscope.core.profiling.sweep import PointResult
from flopscope.core.profiling.transport import JobState
from flopscope.tui.app.launch import live_sweep_app
from flopscope.tui.app.screens.live_sweep import LiveSweepScreen
from flopscope.tui.app.screens.sweep import SweepScreen
from flopscope.tui.presentation.sweep_states import SweepStates
from textual.widgets import DataTable

from ..helpers.cli import CLI
from ..helpers.profile import make_ncu
from ..helpers.tmux import Tmux

P1, P2, P3 = {"bs": "1"}, {"bs": "2"}, {"bs": "4"}
# What a Slurm sweep of three points over two job slots calls, in order (core/profiling/sweep.py,
# core/profiling/slurm.py), and each point's (host, state) after it: bs=4 waits for a free slot;
# bs=2's job fails; bs=4 is cancelled.
STEPS = [
    (
        "on_start",
        (P1, "slurm"),
        {"bs=1": ("slurm", "profiling"), "bs=2": ("", "waiting"), "bs=4": ("", "waiting")},
    ),
    (
        "on_state",
        (P1, "slurm", JobState("12", "PENDING", "Priority")),
        {"bs=1": ("slurm", "queued (job 12: Priority)")},
    ),
    ("on_start", (P2, "slurm"), {"bs=2": ("slurm", "profiling")}),
    (
        "on_state",
        (P2, "slurm", JobState("13", "PENDING", "None")),
        {"bs=2": ("slurm", "queued (job 13)")},
    ),
    (
        "on_state",
        (P1, "slurm", JobState("12", "RUNNING", "None", "node1")),
        {"bs=1": ("slurm", "running on node1 (job 12)"), "bs=2": ("slurm", "queued (job 13)")},
    ),
    (
        "on_state",
        (P2, "slurm", JobState("13", "RUNNING", "None", "node2")),
        {"bs=2": ("slurm", "running on node2 (job 13)")},
    ),
    (
        "on_state",
        (P1, "slurm", JobState("12", "COMPLETED", "None", "node1")),
        {"bs=1": ("slurm", "storing (job 12 completed)")},
    ),
    (
        "on_point",
        (PointResult(P1, "stored", run="s-bs=1", host="slurm"),),
        {"bs=1": ("slurm", "done: s-bs=1"), "bs=4": ("", "waiting")},
    ),
    ("on_start", (P3, "slurm"), {"bs=4": ("slurm", "profiling")}),
    (
        "on_state",
        (P2, "slurm", JobState("13", "TIMEOUT", "TimeLimit", "node2")),
        {"bs=2": ("slurm", "failed: job 13 timeout")},
    ),
    (
        "on_point",
        (PointResult(P2, "failed", host="slurm", error="job 13 ended TIMEOUT: no report"),),
        {"bs=2": ("slurm", "failed: job 13 ended TIMEOUT: no report")},
    ),
    (
        "on_state",
        (P3, "slurm", JobState("14", "CANCELLED by 1000", "None")),
        {"bs=4": ("slurm", "cancelled: job 14")},
    ),
    (
        "on_point",
        (PointResult(P3, "failed", host="slurm", error="job 14 was cancelled"),),
        {"bs=1": ("slurm", "done: s-bs=1"), "bs=4": ("slurm", "cancelled: job 14")},
    ),
]


class Replay:
    """A sweep job that makes one callback each time the test says `step()`, from its own thread as
    run_sweep's workers do, then returns the stored sweep's lines."""

    def __init__(self, lines: list[Slice]) -> None:
        self.lines = lines
        self.go = threading.Semaphore(0)
        self.did = threading.Semaphore(0)

    def __call__(self, **callbacks) -> tuple[list[Slice], str | None]:
        for name, args, _ in STEPS:
            self.go.acquire()
            callbacks[name](*args)  # returns once the app has run it (call_from_thread waits)
            self.did.release()
        self.go.acquire()
        return self.lines, None

    async def step(self, pilot) -> None:
        self.go.release()
        for _ in range(200):
            if self.did.acquire(blocking=False):
                await pilot.pause()
                return
            await pilot.pause(0.02)
        raise AssertionError("the callback never ran")


def rows(screen: LiveSweepScreen) -> dict[str, tuple[str, str, str]]:
    table = screen.query_one(DataTable)
    return {
        str(r[0]): (str(r[1]), str(r[2]), str(r[3]))
        for r in (table.get_row_at(i) for i in range(table.row_count))
    }


async def test_each_point_state_follows_the_callbacks_then_the_findings(reports):
    lines = [Slice("bs", {}, [(1.0, reports[1]), (2.0, reports[2])])]
    job = Replay(lines)
    screen = LiveSweepScreen(job, [P1, P2, P3], "s")
    app = live_sweep_app(screen)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert {k: v[:2] for k, v in rows(screen).items()} == {
            k: ("", "waiting") for k in ("bs=1", "bs=2", "bs=4")
        }
        for name, _, expected in STEPS:
            await job.step(pilot)
            shown = rows(screen)
            assert {k: shown[k][:2] for k in expected} == expected, name
            # a time once a host took the point, none before
            for _, state, elapsed in shown.values():
                assert (elapsed == "") == (state == "waiting"), (state, elapsed)
        status = str(screen.query_one("#live-sweep-status").render())
        assert "1 of 3 done, 1 failed, 1 cancelled" in status
        job.go.release()  # the sweep returns: its findings take over
        for _ in range(200):
            if isinstance(app.screen, SweepScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, SweepScreen)
        assert app.screen.lines == lines and app.report is reports[1]


async def test_q_while_the_sweep_runs_stops_it(reports, monkeypatch):
    stopped = []
    monkeypatch.setattr(
        "flopscope.tui.app.screens.live_sweep.stop_all", lambda: stopped.append(True)
    )
    job = Replay([])
    screen = LiveSweepScreen(job, [P1], "s")
    app = live_sweep_app(screen)
    async with app.run_test(size=(100, 24)) as pilot:
        await job.step(pilot)  # bs=1 profiling
        await pilot.press("q")
    for _ in range(len(STEPS)):  # the replay runs out, as run_sweep's workers end once stopped
        job.go.release()
    assert app.return_code == 130 and stopped == [True] and screen.stopped
    assert screen.states.points["bs=1"].state == "cancelled"


def test_elapsed_runs_from_the_start_and_stops_at_the_end():
    now = [100.0]
    states = SweepStates([P1, P2], clock=lambda: now[0])
    states.start(P1, "h")
    now[0] = 107.4
    assert [r[3] for r in states.rows()] == ["7 s", ""]
    states.result(PointResult(P1, "stored", run="r", host="h"))
    now[0] = 200.0
    assert states.rows()[0] == ("bs=1", "h", "done: r", "7 s")
    states.result(PointResult(P2, "skipped"))
    assert states.rows()[1] == ("bs=2", "", "done: stored by an earlier run", "")


def test_a_real_sweep_in_the_app_shows_states_then_findings(tmp_path):
    """`flopscope sweep` in a real terminal over the stand-in ncu: the points' states change on the
    live screen, then the Sweep screen's findings come up; `q` quits with the sweep's exit code."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    tmux = Tmux()
    home, status = tmp_path / "home", tmp_path / "exit"
    ncu = make_ncu(tmp_path, delay=0.6)
    command = (
        f"env FLOPSCOPE_HOME={shlex.quote(str(home))} TERM=xterm-256color"
        f" {shlex.quote(sys.executable)} -m flopscope.tui.cli sweep --sweep-name live --param"
        f" bs=1,2 --ncu {shlex.quote(str(ncu))} -- true {{bs}}; echo $? >"
        f" {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "120", "-y", "30", command)
    try:
        first = tmux.wait_for("profiling")
        # one host: bs=2 waits for bs=1
        assert "sweep live: 2 point(s)" in first and "waiting" in first
        tmux.wait_for("done: live-bs=1")
        findings = tmux.wait_for("FLOP = ")  # the Sweep screen's fits
        # The stand-in hands back one report for both: the finding that bs never reached the
        # program.
        assert (
            "identical at every bs" in findings
            and "profiling" not in findings
            and "waiting" not in findings
        )
        tmux("send-keys", "-t", "app", "q")
        deadline = time.monotonic() + 30
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "0"
        assert "flopscope: sweep live: 2 of 2 point(s) stored" in "".join(
            tmux.screen().splitlines()
        )
    finally:
        tmux("kill-server")
    out = subprocess.run(
        [*CLI, "runs", "--json", "--sweep", "live"],
        capture_output=True,
        text=True,
        env={"FLOPSCOPE_HOME": str(home), "PATH": ""},
    )
    assert out.stdout.count('"name"') == 2, out
