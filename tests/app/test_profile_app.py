"""`flopscope profile` in the app: the live screen fills in from ncu's progress, then the Kernels
screen shows the report that came back (ncu replaced by the stand-in that replays captured
output)."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.core.ncu.command import ProfileOptions
from flopscope.core.profiling.profiler import profile
from flopscope.core.profiling.transport import LocalTransport
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.kernels import KernelsScreen
from flopscope.tui.app.screens.profile import ProfileScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.widgets import DataTable

from ..conftest import fixture_path
from ..helpers.app import screen_lines
from ..helpers.cli import CLI
from ..helpers.profile import make_ncu

MW = "v100_ncar_miniweather_fp64_full.ncu-rep"


async def wait_for(pilot, condition, what: str, tries: int = 400) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


def live_app(tmp_path, **standin) -> tuple[FlopscopeApp, ProfileScreen]:
    """The app running a real profile of `true` through the stand-in ncu, as `flopscope profile`
    does."""
    opts = ProfileOptions(command=["true"], ncu=str(make_ncu(tmp_path, **standin)))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    screen = ProfileScreen(
        lambda on_event, on_process: profile(
            opts, LocalTransport(), run_dir, on_event=on_event, on_process=on_process
        ),
        "ncu on localhost: true",
    )
    return kernels_app(run_dir / "report.ncu-rep", live=screen), screen


async def test_live_profile_then_kernels(tmp_path):
    app, screen = live_app(tmp_path, report=MW, delay=0.3)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: len(screen.rows) >= 2, "two kernels announced")
        # still profiling: the table fills in as ncu goes
        assert isinstance(app.screen, ProfileScreen)
        assert screen.query_one(DataTable).row_count == len(screen.rows) >= 2
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, KernelsScreen)
                and app.kernels.model is not None
                and not app.kernels.query_one(KernelTable).loading
            ),
            "the report's kernels",
        )
        expected = read_report(fixture_path(MW)).group("name")
        assert app.kernels.model.shown()["kernel_full"].tolist() == expected["kernel_full"].tolist()
        assert len(screen.rows) == 5


async def test_failed_profile_stays_on_screen_with_the_reason(tmp_path):
    app, screen = live_app(tmp_path, scenario="perm")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: screen.failed is not None, "the failure")
        assert "ERR_NVGPUCTRPERM" in screen.failed
        await pilot.pause()
        # ncu's message once (it was shown three times: status line, ncu's error, the failure), and
        # what to do.
        text = " ".join(" ".join(screen_lines(app)).split())
        assert (
            text.count(
                "The user does not have permission to access NVIDIA GPU Performance Counters"
            )
            == 1
        )
        assert text.count("NVreg_RestrictProfilingToAdminUsers=0") == 1
        assert "failed after" in text and "the reason is in the log below" in text
        assert "Connected to process" in text and "==PROF==" not in text and "==ERROR==" not in text
        await pilot.press("q")
    assert app.return_code == 2


async def test_open_a_stored_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    report = read_report(fixture_path(MW))
    Store().save(report, "mw-run")
    stored = Store().load("mw-run")
    app = kernels_app("mw-run", report=stored)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(
            pilot,
            lambda: (
                app.kernels.model is not None and not app.kernels.query_one(KernelTable).loading
            ),
            "the stored run's kernels",
        )
        shown = app.kernels.model.shown()
        assert shown["flop"].tolist() == report.group("name")["flop"].tolist()


async def test_q_while_profiling_stops_ncu_and_exits_130(tmp_path):
    """Before: `q` exited 0, as if the profile had finished."""
    app, screen = live_app(tmp_path, report=MW, delay=1.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(
            pilot, lambda: screen.rows and screen.process is not None, "ncu running, one kernel"
        )
        await pilot.press("q")
    assert app.return_code == 130 and screen.stopped
    assert screen.process.wait(timeout=10) is not None  # ncu was told to stop, not left running


def test_a_stopped_profile_says_so_and_frees_its_name(tmp_path):
    """`flopscope profile` in a real terminal, `q` while ncu runs: exit 130, one line saying it
    stopped, and the run folder (only ncu.log and run.json) removed, so the next `--name stoprun` is
    stoprun again."""
    import shlex
    import shutil
    import subprocess
    import sys
    import time

    import pytest

    from ..helpers.tmux import Tmux

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    tmux = Tmux()
    home, status = tmp_path / "home", tmp_path / "exit"
    ncu = make_ncu(tmp_path, report=MW, delay=1.0)
    # The app draws on stderr: the line after it is read off the terminal, not from a redirect.
    command = (
        f"env FLOPSCOPE_HOME={shlex.quote(str(home))} TERM=xterm-256color"
        f" {shlex.quote(sys.executable)} -m flopscope.tui.cli profile --ncu {shlex.quote(str(ncu))}"
        f" --name stoprun -- true; echo $? > {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "100", "-y", "30", command)
    try:
        tmux.wait_for("set_halo_values_x_396_gpu")  # the first kernel profiled: ncu is running
        assert (home / "runs" / "stoprun" / "ncu.log").exists()
        tmux("send-keys", "-t", "app", "q")
        deadline = time.monotonic() + 60
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "130"
        shown = "".join(tmux.wait_for("profile stopped").splitlines())  # the line, unwrapped
    finally:
        tmux("kill-server")
    assert (
        f"flopscope: profile stopped; nothing was kept (run folder {home / 'runs' / 'stoprun'}"
        " removed)" in shown
    )
    assert not (home / "runs" / "stoprun").exists()
    assert (
        subprocess.run(
            [*CLI, "runs", "--json"],
            capture_output=True,
            text=True,
            env={"FLOPSCOPE_HOME": str(home), "PATH": ""},
        ).stdout.strip()
        == "[]"
    )


async def test_a_failure_ncu_did_not_report_is_logged_whole(tmp_path):
    """No ncu at the path given: no ncu error came before, so the log holds the whole reason,
    once."""
    opts = ProfileOptions(command=["true"], ncu=str(tmp_path / "no-such-ncu"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    screen = ProfileScreen(
        lambda on_event, on_process: profile(
            opts, LocalTransport(), run_dir, on_event=on_event, on_process=on_process
        ),
        "ncu on localhost: true",
    )
    app = kernels_app(run_dir / "report.ncu-rep", live=screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: screen.failed is not None, "the failure")
        await pilot.pause()
        # Spaces aside: the log folds a path longer than its width (pytest's own, under a long base
        # folder).
        text = "".join("".join(screen_lines(app)).split())
        assert text.count("".join(screen.failed.split())) == 1 and "no-such-ncu" in screen.failed
