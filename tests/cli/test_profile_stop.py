"""Stopping a profile, and hosts whose login shell is not what flopscope expects.

A stop (SIGTERM, Ctrl-C, the SSH session going away) must take ncu and the program under it down
too, on this machine and on a remote host, where nothing else would: the remote side has no terminal
to hang up. The remote command line must be inert whatever login shell the host runs (fish and csh
read quotes unlike sh), and text a login script prints must not end up inside the copied report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flopscope.core import read_report

from ..conftest import fixture_path
from ..helpers.cli import CLI
from ..helpers.cli import run_cli as flopscope
from ..helpers.processes import reading_a_pipe, worker_of
from ..helpers.profile import make_ncu, one_error_line, remote
from ..helpers.sshd import start_sshd

BANNER = "Welcome to gpubox! Last login: yesterday"


@pytest.fixture(scope="module")
def chatty_host(tmp_path_factory):
    """A host whose login runs a script that prints to standard output, and that logs each command
    line the login shell is handed."""
    root = tmp_path_factory.mktemp("chatty")
    log = root / "command_lines.log"
    login = root / "login"
    login.write_text(
        f"#!/bin/sh\nprintf '%s\\0' \"$SSH_ORIGINAL_COMMAND\" >> {log}\necho '{BANNER}'\n"
        'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n'
    )
    login.chmod(0o755)
    srv = start_sshd(root / "sshd", alias="chatty", force_command=str(login))
    yield srv, log
    srv.stop()


def _gone(marker: str, within_s: float = 10.0) -> bool:
    """Whether every process of `marker` ends within `within_s` (signals take a moment to land)."""
    deadline = time.monotonic() + within_s
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not _alive(marker)


def _alive(marker: str) -> list[int]:
    """Processes whose command line holds `marker`, this test's own excepted."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if marker in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def test_login_shell_sees_only_sh_and_the_report_survives_a_banner(tmp_path, chatty_host):
    server, log = chatty_host
    seen = tmp_path / "argv.json"
    hostile = ["a\\'", "'; touch PWNED; #", "b\\'", "$(touch PWNED)", "x\ny"]
    program = f"import json, sys; json.dump(sys.argv[1:], open({str(seen)!r}, 'w'))"
    out = flopscope(
        "profile",
        *remote(server),
        "--ncu",
        make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep"),
        "--no-tui",
        "--json",
        "--",
        sys.executable,
        "-c",
        program,
        *hostile,
        home=tmp_path / "home",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(seen.read_text()) == hostile
    command_lines = log.read_text().split("\0")[:-1]
    # no user value ever reaches the login shell
    assert command_lines and set(command_lines) == {"sh -s"}
    expected = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")).group("name")
    assert [r["kernel"] for r in json.loads(out.stdout)["rows"]] == list(expected["kernel"])


def _start(tmp_path: Path, host: list, marker: str) -> subprocess.Popen:
    ncu = make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep", delay=2.0)
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [
            *CLI,
            "profile",
            *host,
            "--ncu",
            ncu,
            "--no-tui",
            "--name",
            "stopped",
            "--",
            "sleep",
            marker,
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    for line in proc.stderr:
        if "kernel 0:" in line:
            return proc
    pytest.fail(f"no kernel line before flopscope ended: {proc.wait()}")


@pytest.mark.parametrize(
    ("where", "sig"),
    [
        ("local", signal.SIGTERM),
        ("local", signal.SIGINT),
        ("ssh", signal.SIGTERM),
        ("ssh", signal.SIGHUP),
    ],
)
def test_stopping_flopscope_stops_ncu_and_the_program(tmp_path, request, where, sig):
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    marker = f"{time.time() % 1000 + 100:.6f}"  # `sleep <marker>`: a command line no other test has
    proc = _start(tmp_path, host, marker)
    assert _alive(marker), "the program under ncu should be running"
    workdir = _workdir(tmp_path / "home" / "runs" / "stopped")
    assert workdir.is_dir()
    proc.send_signal(sig)
    stderr = proc.stderr.read()
    assert proc.wait(timeout=30) == 130
    assert (
        stderr.strip().splitlines()[-1]
        == "flopscope: stopped (ncu and the program it profiled were stopped too)"
    )
    assert "Traceback" not in stderr
    assert _gone(marker), "ncu's program still runs after flopscope stopped"
    assert not workdir.exists()  # the (remote) work folder is cleaned up
    # Before: runs/stopped stayed (ncu.log, run.json, no report) and the next --name stopped became
    # stopped-1.
    assert not (tmp_path / "home" / "runs" / "stopped").exists()
    assert "run folder" in stderr and "removed" in stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopping_a_command_that_runs_no_ncu_says_just_stopped(tmp_path, sig):
    """`report -` (or a FIFO) stopped while it waits for input: before, it said "stopped (ncu and
    the program it profiled were stopped too)", though `report` starts neither."""
    proc = subprocess.Popen(
        [*CLI, "report", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FLOPSCOPE_HOME": str(tmp_path)},
    )
    proc.stdin.write('"ID","Kernel Name"\n')  # a page that has begun and not ended
    proc.stdin.flush()
    assert reading_a_pipe(worker_of(proc.pid))
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 130
    assert proc.stderr.read() == "flopscope: stopped\n"
    proc.stdin.close()


def _workdir(run_dir: Path) -> Path:
    """The (remote) work folder a profile's ncu writes its report into, as its run.json says."""
    run = json.loads((run_dir / "run.json").read_text())
    return Path(run["ncu_argv"][run["ncu_argv"].index("--export") + 1]).parent


def test_ncu_exiting_255_over_ssh_is_not_a_lost_connection(tmp_path, server):
    ncu = tmp_path / "ncu-old"
    ncu.write_text(
        "#!/bin/sh\necho '==ERROR== unrecognised option --cache-control bogus'\nexit 255\n"
    )
    ncu.chmod(0o755)
    out = flopscope(
        "profile", *remote(server), "--ncu", ncu, "--no-tui", "--", "true", home=tmp_path
    )
    line = one_error_line(out)
    assert "unrecognised option --cache-control bogus" in line and "lost" not in line


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_stopping_a_sweep_stops_every_point_and_cleans_up(tmp_path, request, where):
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    marker = f"{time.time() % 1000 + 2000:.6f}"
    ncu = make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep", delay=2.0)
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
    sweep = [*CLI, "sweep", *host, "--param", "bs=1,2,3", "--no-tui", "--sweep-name", "sw"]
    proc = subprocess.Popen(
        [*sweep, "--ncu", ncu, "--", "sleep", marker, "{bs}"],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    for line in proc.stderr:
        if "kernel 0:" in line:
            break
    runs = tmp_path / "home" / "runs"
    workdir = _workdir(runs / "sw-bs=1")
    assert workdir.is_dir()
    proc.send_signal(signal.SIGTERM)
    stderr = proc.stderr.read()
    assert proc.wait(timeout=40) == 130, stderr
    assert "Traceback" not in stderr
    assert _gone(marker), "ncu's program still runs after the sweep stopped"
    assert "[2/3]" not in stderr  # no later point was started after the stop
    # Before: the worker threads died with Python, leaving the (remote) work folder and runs/sw-bs=1
    # (no report).
    assert not workdir.exists()
    assert (
        not runs.exists()
        or [p.name for p in runs.iterdir() if not (p / "report.ncu-rep").exists()] == []
    )
    # the same ncu, without the delay
    fast = make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep")
    resumed = subprocess.run(
        [*sweep, "--resume", "--ncu", fast, "--", "true", "{bs}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    # not sw-bs=1-1
    assert sorted(p.name for p in runs.iterdir()) == ["sw-bs=1", "sw-bs=2", "sw-bs=3"]


def test_a_chatty_program_does_not_fill_memory_but_every_ncu_event_is_kept(tmp_path):
    from flopscope.core.ncu.command import ProfileOptions
    from flopscope.core.profiling.profiler import profile
    from flopscope.core.profiling.transport import LocalTransport

    lines = 5000
    opts = ProfileOptions(
        # each line one write(2), so the lines counted below stay whole: print() flushes its buffer
        # whenever it fills, mid-line, and ncu's lines written meanwhile land inside that line (a CI
        # run counted 4999)
        command=[
            sys.executable,
            "-c",
            f"import os\nfor i in range({lines}): os.write(1, b'line %d\\n' % i)",
        ],
        ncu=str(make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep")),
    )
    (tmp_path / "run").mkdir()
    result = profile(opts, LocalTransport(), tmp_path / "run")
    kernels = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")).kernels
    assert result.kernels_profiled == len(kernels)  # every ncu line kept
    assert sum(e.kind == "output" for e in result.events) <= 200
    assert [e.text for e in result.events if e.kind == "output"][-1] == f"line {lines - 1}"
    # the log has everything
    assert (tmp_path / "run" / "ncu.log").read_text().count("line ") == lines


def test_output_between_ncu_events_is_trimmed_to_the_last_lines_and_every_ncu_event_stays():
    """ncu's lines interleaved with the program's (how they arrive under load): the result keeps all
    of ncu's and only the program's last 200. The trim once looked 200 events back only, so an ncu
    event there let older output pile up (a CI run saw more than 200)."""
    from flopscope.core.ncu.progress import Event
    from flopscope.core.profiling.profiler import KEPT_OUTPUT, _trim_output

    events = []
    for i in range(3000):
        events.append(Event("output", f"line {i}"))
        if i % 3 == 0:
            events.append(Event("kernel", f"kernel {i}"))
    left = _trim_output(events, 3000)
    outputs = [e.text for e in events if e.kind == "output"]
    assert left == KEPT_OUTPUT == len(outputs) and outputs == [
        f"line {i}" for i in range(2800, 3000)
    ]
    assert [e.text for e in events if e.kind == "kernel"] == [
        f"kernel {i}" for i in range(0, 3000, 3)
    ]


def _blocked(pid: int, tid: int) -> int:
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    return int(
        next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:")), 16
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_only_the_main_thread_can_take_a_stop_signal(tmp_path, sig):
    """Python runs handlers only in the main thread. A CI run hung when the kernel gave SIGINT to
    another thread (pyarrow's allocator, started at import) while the main thread sat in read(2) on
    a quiet pipe: every other thread of a running flopscope now blocks SIGINT, SIGTERM and SIGHUP,
    so the kernel hands them to the main thread, and a signal to the process stops it."""
    marker = f"{time.time() % 1000 + 100:.6f}"
    proc = _start(tmp_path, [], marker)
    assert _alive(marker)
    stops = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1)) | (1 << (signal.SIGHUP - 1))
    worker = worker_of(proc.pid)  # the process that runs the command's threads
    others = [int(t) for t in os.listdir(f"/proc/{worker}/task") if int(t) != worker]
    assert others, "flopscope runs no other thread: nothing to check"
    assert [t for t in others if _blocked(worker, t) & stops != stops] == []
    assert _blocked(worker, worker) & stops == 0
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 130
    assert _gone(marker), "ncu's program still runs after flopscope stopped"
