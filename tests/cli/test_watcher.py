"""The `flopscope` command runs its work in a worker process and watches it (tui/cli/watcher.py).

These tests end a real worker the ways native code does (abort, a kill, glibc's `_exit`) and check
what the user sees: one line naming the file, how the worker ended, the memory it reached and the
fix, exit 2. They also check that everything else behaves as one process would: exit statuses, stop
signals sent to the command or to its whole process group, a SIGKILL to the command, and a terminal
the app had in raw mode."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import resource
import select
import signal
import subprocess
import sys
import termios
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from ..helpers.cli import CLI
from ..helpers.processes import gone, open_for_writing, reading_a_pipe, worker_of

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@contextmanager
def _reading_a_fifo(tmp_path: Path, address_space: int | None = None, **popen):
    """flopscope reading a FIFO named page.csv that holds the start of a page: (process, its worker,
    the path)."""
    fifo = tmp_path / "page.csv"
    os.mkfifo(fifo)
    setup = popen.pop("preexec_fn", None)

    def preexec() -> None:
        if address_space:
            resource.setrlimit(resource.RLIMIT_AS, (address_space,) * 2)
        if setup:
            setup()

    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [*CLI, "report", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, preexec_fn=preexec, **popen,
    )  # fmt: skip
    writer = open_for_writing(fifo)
    try:
        os.write(writer, b'"ID","Kernel Name"\n')  # a page that has begun and not ended
        worker = worker_of(proc.pid)
        assert reading_a_pipe(worker)
        yield proc, worker, fifo
    finally:
        os.close(writer)
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _one_line(proc: subprocess.Popen) -> str:
    """The command's one line (an out-of-memory one starts on a new line: a blank one before it)."""
    _, err = proc.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line]
    assert proc.returncode == 2 and len(lines) == 1, f"exit {proc.returncode}\n{err}"
    return lines[0]


def test_a_worker_ended_by_abort_is_one_line_and_exit_2(tmp_path):
    with _reading_a_fifo(tmp_path) as (proc, worker, fifo):
        os.kill(worker, signal.SIGABRT)
        line = _one_line(proc)
    assert line.startswith(
        f"flopscope: {fifo}: a native library crashed (SIGABRT after it reached "
    )
    assert "GiB)" in line and "damaged" in line


def test_an_abort_under_an_address_space_limit_says_out_of_memory_and_the_limit(tmp_path):
    with _reading_a_fifo(tmp_path, address_space=48 << 30) as (proc, worker, fifo):
        os.kill(worker, signal.SIGABRT)
        line = _one_line(proc)
    assert line.startswith(
        f"flopscope: {fifo}: out of memory, most likely: a native library ended it (SIGABRT"
    )
    assert "address-space limit (ulimit -v) of 48 GiB; raise the limit" in line


def test_a_worker_killed_by_sigkill_is_one_line_and_exit_2(tmp_path):
    with _reading_a_fifo(tmp_path) as (proc, worker, fifo):
        os.kill(worker, signal.SIGKILL)
        line = _one_line(proc)
    assert line.startswith(f"flopscope: {fifo}: ") and "(SIGKILL after it reached " in line
    # Where the cgroup's count of out-of-memory kills can be read, a kill from outside is not called
    # one.
    assert (
        "killed from outside flopscope" in line
        or "out-of-memory killer ended it, most likely" in line
    )


def _watched(work: str, *argv: str) -> subprocess.CompletedProcess:
    """`watched(work)` in a fresh interpreter, for a command line of `argv`."""
    code = (
        f"import ctypes, sys\nsys.argv = ['flopscope', *{list(argv)!r}]\n"
        f"from flopscope.tui.cli.watcher import watched\nsys.exit(watched(lambda: {work}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_an_out_of_memory_line_starts_on_a_line_of_its_own_after_natives_unended_one():
    """glibc short of memory cuts its abort message off mid-line (`terminate called after throwing
    an instance of '`, seen in CI under `prlimit --as`): flopscope's line starts one of its own."""
    code = (
        "import os, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (48 << 30, 48 << 30))\n"
        "sys.argv = ['flopscope', 'report', 'big.csv']\n"
        "from flopscope.tui.cli.watcher import watched\n"
        "def work():\n"
        '    os.write(2, b"terminate called after throwing an instance of \'")\n'
        "    os.abort()\n"
        "sys.exit(watched(work))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    native, ours = done.stderr.splitlines()[0], done.stderr.splitlines()[-1]
    assert native == "terminate called after throwing an instance of '"
    assert ours.startswith(
        "flopscope: big.csv: out of memory, most likely: a native library ended it (SIGABRT"
    ), done.stderr


def test_a_worker_that_exits_around_python_is_a_crash(tmp_path):
    """glibc ends a process that cannot allocate a new thread's data with `_exit(127)`, no signal:
    the status alone does not tell it from the command's own, but Python's exit never ran."""
    done = _watched("ctypes.CDLL(None)._exit(127)", "report", "big.csv")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "flopscope: big.csv: a native library crashed (exit status 127 after it reached"
    )
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("code", [0, 130])
def test_a_teardown_that_aborts_cannot_fail_a_finished_or_stopped_command(code):
    """Arrow's threads can abort the interpreter's teardown at random after a command finished, or
    after Ctrl-C stopped a read (std::terminate, apache/arrow#34314; a CI run saw it after
    "flopscope: stopped"). The worker skips that teardown; an exit handler that aborts stands in for
    it."""
    aborts = "(__import__('atexit').register(__import__('os').abort), {})[1]"
    unwatched = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.exit({aborts.format(code)})"], timeout=60
    )
    assert unwatched.returncode == -signal.SIGABRT  # the stand-in does abort a teardown
    done = _watched(aborts.format(code), "report", "big.csv")
    assert (done.returncode, done.stderr) == (code, "")


def test_the_workers_own_exit_status_and_traceback_pass_through():
    assert (_watched("7", "gpus").returncode, _watched("7", "gpus").stderr) == (7, "")
    failed = _watched("1 / 0", "gpus")
    assert failed.returncode == 1 and failed.stderr.rstrip().endswith(
        "ZeroDivisionError: division by zero"
    )
    assert "flopscope:" not in failed.stderr


def test_a_sigkill_to_the_command_ends_its_worker(tmp_path):
    with _reading_a_fifo(tmp_path) as (proc, worker, _):
        os.kill(proc.pid, signal.SIGKILL)
        assert gone(worker), "the worker outlived the command"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_sent_to_the_whole_group_stops_once(tmp_path, sig):
    """`timeout`, `kill -- -PGID` and Slurm signal every process: the worker has the signal from the
    sender and again from the watcher, which cannot tell. The second must not cut the first's clean
    stop short."""
    with _reading_a_fifo(tmp_path, start_new_session=True) as (proc, _, _):
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "flopscope: stopped\n")


def _state(pid: int, want: str, within_s: float = 20.0) -> str:
    """Process `pid`'s state letter (`T` stopped, `S` sleeping, ...) once it is `want`, or as it is
    at the end."""
    deadline = time.monotonic() + within_s
    while True:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == want or time.monotonic() > deadline:
            return state
        time.sleep(0.02)


def test_a_worker_stopped_alone_stops_the_command_and_continues_with_it(tmp_path):
    """A `kill -STOP` that stops the worker alone stops the command too, so the shell sees the job
    stopped; a SIGCONT to the command alone continues both; the work then ends as it would have."""
    with _reading_a_fifo(tmp_path) as (proc, worker, _):
        os.kill(worker, signal.SIGSTOP)
        assert _state(proc.pid, "T") == "T", "the command did not stop with its worker"
        os.kill(proc.pid, signal.SIGCONT)
        assert _state(proc.pid, "S") != "T" and _state(worker, "S") != "T", (
            "the worker stayed stopped"
        )
        assert reading_a_pipe(worker)
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "flopscope: stopped\n")


def test_a_worker_ended_by_another_signal_ends_the_command_by_it(tmp_path):
    with _reading_a_fifo(tmp_path) as (proc, worker, _):
        os.kill(worker, signal.SIGUSR1)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (-signal.SIGUSR1, "")


def test_an_app_that_crashed_leaves_the_terminal_as_it_found_it():
    """The app puts the terminal in raw mode on the alternate screen; a worker that dies there
    cannot undo it. The watcher restores the settings, leaves the alternate screen and then prints
    its line."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(COLUMNS="100", LINES="30", TERM="xterm-256color")
        os.execv(sys.executable, [sys.executable, "-m", "flopscope.tui.cli", "demo"])
    shown = _read_until(fd, b"FLOP")  # the kernels table is up
    assert not termios.tcgetattr(fd)[3] & termios.ICANON, (
        "the app did not put the terminal in raw mode"
    )
    os.kill(worker_of(pid), signal.SIGABRT)
    after = _read_until(fd, None)
    _, status = os.waitpid(pid, 0)
    assert termios.tcgetattr(fd)[3] & termios.ECHO and termios.tcgetattr(fd)[3] & termios.ICANON
    os.close(fd)
    assert b"\x1b[?1049h" in shown and os.waitstatus_to_exitcode(status) == 2
    # Off the alternate screen and the cursor shown, then the line, on the screen the shell is on.
    assert b"\x1b[?1049l" in after and b"\x1b[?25h" in after.rsplit(b"\x1b[?1049l", 1)[1]
    line = re.sub(rb"\x1b\[[?<>]?[0-9;]*[A-Za-z]", b"", after.rsplit(b"\x1b[?1049l", 1)[1]).strip()
    assert line.startswith(b"flopscope: demo: a native library crashed (SIGABRT"), after[-500:]
    # Every terminal mode the app changed is back as a fresh terminal has it before the line is
    # printed: with line wrap left off (Textual turns it off), the line and the shell's long lines
    # after it were cut at the right margin.
    before_line = after[: after.index(b"flopscope: demo")]
    left = {
        mode: on
        for mode, on in _private_modes(shown).items()
        if on != (mode in _ON_IN_A_FRESH_TERMINAL)
    }
    assert left, "the app changed no terminal mode: nothing was checked"
    restored = _private_modes(before_line)
    assert {mode: restored.get(mode) for mode in left} == {
        mode: not on for mode, on in left.items()
    }


# DEC private modes: line wrap and the cursor on, every other one off
_ON_IN_A_FRESH_TERMINAL = {7, 25}


def _private_modes(text: bytes) -> dict[int, bool]:
    """The DEC private modes `text` sets (`ESC [ ? N h`) or resets (`ESC [ ? N l`): each one's last
    state."""
    modes: dict[int, bool] = {}
    for numbers, final in re.findall(rb"\x1b\[\?([0-9;]+)([hl])", text):
        for number in numbers.split(b";"):
            modes[int(number)] = final == b"h"
    return modes


def _read_until(fd: int, text: bytes | None, within_s: float = 90.0) -> bytes:
    """What the terminal shows until `text` appears (None: until the last process lets go of it)."""
    out = b""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and (text is None or text not in out):
        if select.select([fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: nobody holds the terminal any more
                return out
            if not chunk:
                return out
            out += chunk
    assert text is None or text in out, out[-2000:]
    return out


def test_ctrl_c_on_the_terminal_stops_the_worker_once(tmp_path):
    """Ctrl-C typed on a terminal stops the command as it did one process: one "stopped" line, exit
    130."""
    fifo = tmp_path / "page.csv"
    os.mkfifo(fifo)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["FLOPSCOPE_HOME"] = str(tmp_path / "home")
        os.execv(sys.executable, [sys.executable, "-m", "flopscope.tui.cli", "report", str(fifo)])
    writer = open_for_writing(fifo)
    os.write(writer, b'"ID","Kernel Name"\n')
    assert reading_a_pipe(worker_of(pid))
    os.write(fd, b"\x03")  # what the key sends; the terminal turns it into SIGINT
    out = _read_until(fd, None)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    os.close(writer)
    assert os.waitstatus_to_exitcode(status) == 130, out
    assert out.replace(b"^C", b"").strip() == b"flopscope: stopped", out


# Counts deliveries as the C-level handler sees them (a byte each on the wakeup fd), not Python's
# handler calls, which merge deliveries that come before Python gets to run it.
_COUNTS_SIGINT = """import os, signal, sys, time
from flopscope.tui.cli.watcher import watched
def work():
    r, w = os.pipe()
    os.set_blocking(w, False)
    os.set_blocking(r, False)
    signal.set_wakeup_fd(w)
    signal.signal(signal.SIGINT, lambda *_: None)
    print('ready', flush=True)
    time.sleep(2)
    print('SIGINTs', len(os.read(r, 100)), flush=True)
    return 0
sys.exit(watched(work))
"""


def test_a_signal_from_the_terminal_reaches_the_worker_once():
    """The terminal sends Ctrl-C's SIGINT to the worker and its watcher both: passing it on would
    make two."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-c", _COUNTS_SIGINT])
    _read_until(fd, b"ready")
    os.write(fd, b"\x03")
    out = _read_until(fd, None)
    os.waitpid(pid, 0)
    os.close(fd)
    assert b"SIGINTs 1" in out, out


@pytest.mark.parametrize("command", [["report", "{fifo}"], ["demo"]])
def test_a_terminal_that_goes_away_ends_the_worker(tmp_path, command):
    """A closed tmux pane or a dropped SSH session hangs the terminal up: the kernel sends SIGHUP to
    the session leader only, which is the watcher. It must pass it on, or the worker outlives the
    terminal (the app then spun on a dead terminal, found after a benchmark left 16 of them
    running)."""
    fifo = tmp_path / "page.csv"
    os.mkfifo(fifo)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(FLOPSCOPE_HOME=str(tmp_path / "home"), TERM="xterm-256color")
        argv = [a.format(fifo=fifo) for a in command]
        os.execv(sys.executable, [sys.executable, "-m", "flopscope.tui.cli", *argv])
    if command[0] == "report":
        writer = open_for_writing(fifo)
        os.write(writer, b'"ID","Kernel Name"\n')
        assert reading_a_pipe(worker_of(pid))
    else:
        writer = None
        _read_until(fd, b"FLOP")  # the app is up
    worker = worker_of(pid)
    os.close(fd)  # the terminal goes away
    try:
        assert gone(worker, within_s=20), "the worker outlived its terminal"
        assert gone(pid, within_s=20), "the command outlived its terminal"
    finally:
        for process in (worker, pid):
            with contextlib.suppress(OSError):
                os.kill(process, signal.SIGKILL)
        os.waitpid(pid, 0)
        if writer is not None:
            os.close(writer)


def test_a_hang_up_under_nohup_is_ignored_as_nohup_asks(tmp_path):
    """`nohup flopscope sweep ... &` then logging out: the hang-up must not stop the work (it did
    even before the watcher: the stop handler replaced the ignored SIGHUP)."""
    ignore = lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)  # noqa: E731 - what nohup does
    with _reading_a_fifo(tmp_path, preexec_fn=ignore) as (proc, worker, _):
        os.kill(proc.pid, signal.SIGHUP)
        os.kill(worker, signal.SIGHUP)
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "flopscope: stopped\n")
