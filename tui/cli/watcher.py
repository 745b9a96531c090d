"""flopscope runs as two processes: a worker does everything, and its parent only watches it.

A native library can end a process without Python ever hearing of it: Arrow's CSV reader calls
abort() when it cannot allocate a buffer under an address-space limit, a parser may crash on a
damaged file, the kernel's out-of-memory killer sends SIGKILL. The user would see nothing, or one
line of C++ and the shell's "Aborted". The parent holds next to nothing, outlives such an end, and
says it in flopscope's one line: the file, how the worker ended, the memory it had reached and the
limit, and the fix; exit 2 (issue 25).

Everything else passes through as if there were one process:
- the worker's exit status is the command's;
- stop signals: a terminal sends Ctrl-C to its whole foreground process group, the worker included;
  a SIGHUP, or any signal sent to the parent by kill(2), is passed on;
- a worker ended by any other signal ends the parent by the same signal;
- the worker dies with its parent (PR_SET_PDEATHSIG): a SIGKILL to flopscope still stops the work;
- a worker stopped alone stops the parent, and the parent continued continues it (job control);
- a terminal the worker left in raw mode (the app) is restored before the line is printed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from resource import struct_rusage  # what os.wait4 returns (no `resource` module on Windows)

    from ...core.common import FlopscopeError

termios: ModuleType | None  # None on Windows
try:  # imported before any limit bites: a worker's crash must not leave the watcher short of it
    import termios
except ImportError:  # Windows
    termios = None

# How a process ends when native code gives up on it: abort(), a bad access, or the out-of-memory
# killer.
CRASHES = {
    signal.SIGABRT,
    signal.SIGSEGV,
    signal.SIGBUS,
    signal.SIGILL,
    signal.SIGFPE,
    signal.SIGKILL,
}
PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# si_code of a signal the kernel itself sent. A terminal's Ctrl-C goes to its whole foreground
# process group, the worker included; its hang-up only to the session leader, which this process may
# be (a tmux pane, an SSH session), so a SIGHUP is always passed on (the worker takes a second one
# as the same stop).
_SI_KERNEL = 0x80
_goodbye: int | None = None  # in a worker: the pipe its Python exit writes to (see _said_goodbye)
# Leave the alternate screen, show the cursor, turn line wrap back on, stop mouse reports, bracketed
# paste, focus events, in-band resize reports and the kitty keyboard protocol: what a full-screen
# app (Textual) changes and a crash leaves changed. Line wrap left off cut flopscope's one line, and
# the shell's long lines after it, at the right margin.
_TERMINAL_RESET = (
    "\x1b[?1049l\x1b[?25h\x1b[?7h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l"
    "\x1b[?1004l\x1b[?2048l\x1b[<u"
)


def watched(work: Callable[[], int]) -> int:
    """Run `work()` in a forked worker, which ends with what `work()` returns (or raises); the
    command's process ends with the worker's exit status (or 2, after the line for a crash). Where
    there is no fork (Windows), just return `work()`."""
    if not hasattr(os, "fork") or not hasattr(signal, "sigwaitinfo"):
        return work()
    # One the command was started with ignored (`nohup`, SIGINT under `&`) stays ignored: not waited
    # for.
    waits = {sig for sig in PASSED_ON if signal.getsignal(sig) is not signal.SIG_IGN} | {
        signal.SIGCHLD
    }
    # from here on, the parent takes them one by one
    before = signal.pthread_sigmask(signal.SIG_BLOCK, waits)
    terminal = _terminal_state()
    oom_kills = _oom_kills()
    parent = os.getpid()
    try:
        goodbye, said = os.pipe()
        pid = os.fork()
    except OSError:  # no memory or no process left to fork: work unwatched
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        return work()
    if pid == 0:
        os.close(goodbye)
        _end_with(parent)
        global _goodbye
        _goodbye = said
        atexit.register(_say_goodbye)  # Python's own exit (a traceback's too), never native code's
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        _leave(work())
    os.close(said)
    _exit(_watch(pid, waits, goodbye, terminal, oom_kills))


def _watch(
    pid: int, waits: set[signal.Signals], goodbye: int, terminal: list | None, oom_kills: int | None
) -> int:
    """In the command's process: wait for the worker and return the command's exit status."""
    status, usage = _wait(pid, waits)
    # The stop signals stay blocked: one that arrives now was meant for the worker, not for this
    # last step.
    signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if signum is None and _said_goodbye(goodbye):
        return os.waitstatus_to_exitcode(status)
    _restore(terminal)
    if signum is not None and signum not in CRASHES:
        _end_by(signum)
    ending = (
        signal.Signals(signum).name
        if signum
        else f"exit status {os.waitstatus_to_exitcode(status)}"
    )
    try:
        from ..presentation.messages import say_error

        say_error(_crash_error(ending, usage.ru_maxrss * 1024, _more(oom_kills, _oom_kills())))
    except Exception:  # this process, too, short of memory for the imports the line needs: say less
        said = (
            f"flopscope: the process doing the work ended by {ending}, most likely out of memory\n"
        )
        os.write(2, said.encode())
    return 2


def _exit(code: int) -> NoReturn:
    """End the command's process: it has nothing to tear down, and Python's teardown costs a
    start-up's tenth."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


def _leave(code: int) -> NoReturn:
    """End the worker once its command returned, Python's and the libraries' teardown skipped:
    everything was said and stored, and that teardown can still fail a finished command. A native
    thread still alive then can abort it (std::terminate, "terminate called without an active
    exception": apache/arrow#34314, and once in a full test run after "flopscope: stopped"); after
    running out of memory, Arrow's readahead may leave a thread that its pool's shutdown waits for
    forever."""
    _say_goodbye()
    _exit(code)


def _say_goodbye() -> None:
    assert _goodbye is not None  # called only in a worker, which has its pipe (watched)
    with contextlib.suppress(OSError):
        os.write(_goodbye, b"1")


def _said_goodbye(goodbye: int) -> bool:
    """Whether the worker ended through Python's exit: glibc, out of memory for a new thread's data,
    `_exit`s with 127 without a signal."""
    os.set_blocking(goodbye, False)
    try:
        return os.read(goodbye, 1) == b"1"
    except BlockingIOError:  # nothing written, and a child of the worker still holds the pipe
        return False


def _wait(pid: int, waits: set[signal.Signals]) -> tuple[int, struct_rusage]:
    while True:
        info = signal.sigwaitinfo(waits)
        if info.si_signo == signal.SIGCHLD:
            done, status, usage = os.wait4(pid, os.WNOHANG | os.WUNTRACED)
            if done == pid and os.WIFSTOPPED(status):
                _stop_beside(pid)
            elif done == pid:
                return status, usage
        # the worker has not had it
        elif info.si_code != _SI_KERNEL or info.si_signo == signal.SIGHUP:
            os.kill(pid, info.si_signo)


def _stop_beside(pid: int) -> None:
    """The worker stopped: stop too, so the shell sees the job stopped, as it would see one process
    (a `kill -STOP` of the worker alone; Ctrl-Z and a background write under `stty tostop` stop the
    whole process group anyway, this process with it). Once continued (`fg` continues the group, a
    `kill -CONT` may reach this process only), continue the worker."""
    os.kill(os.getpid(), signal.SIGSTOP)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def _end_with(parent: int) -> None:
    """In the worker: be killed when the parent dies, as a single process would be."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        # no memory left to load it: the worker merely outlives a killed parent
        except (ImportError, OSError):
            pass
    if os.getppid() != parent:  # the parent died before the line above
        os.kill(os.getpid(), signal.SIGKILL)


def _end_by(signum: int) -> None:
    """End this process by `signum`, as the worker ended: the shell then reports what it would
    have."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os._exit(128 + signum)  # not reached unless the signal cannot end a process


def _terminal_state() -> list | None:
    """The terminal's settings (termios) where stdin is one."""
    if termios is None or sys.stdin is None:
        return None
    try:
        return termios.tcgetattr(sys.stdin.fileno()) if sys.stdin.isatty() else None
    except (OSError, ValueError, termios.error):
        return None


def _restore(saved: list | None) -> None:
    """Put the terminal back as the worker found it, if it left it changed (the app in raw mode)."""
    if saved is None or _terminal_state() == saved:
        return
    assert termios is not None  # the saved settings came from it (_terminal_state)
    try:
        termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, saved)
        if sys.stdout.isatty():
            sys.stdout.write(_TERMINAL_RESET)
            sys.stdout.flush()
    except (OSError, ValueError, termios.error):
        pass


def _more(before: int | None, after: int | None) -> bool | None:
    return None if before is None or after is None else after > before


def _oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has ended in this process's memory
    cgroup (v2's memory.events or v1's memory.oom_control), or None where neither can be read."""
    try:
        with open("/proc/self/cgroup") as handle:
            lines = [line.strip().split(":", 2) for line in handle]
    except OSError:
        return None
    places = [f"/sys/fs/cgroup{path}/memory.events" for _, names, path in lines if names == ""]
    for _, names, path in lines:
        if "memory" in names.split(","):  # a container sees its own cgroup as the mount's root
            places += [
                f"/sys/fs/cgroup/memory{path}/memory.oom_control",
                "/sys/fs/cgroup/memory/memory.oom_control",
            ]
    for place in places:
        try:
            with open(place) as handle:
                return int(dict(line.split() for line in handle)["oom_kill"])
        except (OSError, KeyError, ValueError):
            continue
    return None


def _crash_error(ending: str, peak_bytes: int, oom_killed: bool | None) -> FlopscopeError:
    """The error for a worker that native code ended (`ending`: the signal, or an exit status
    Python did not give): what it worked on, how it ended, the memory it had reached, the likely
    cause and its fix. `oom_killed`: whether the out-of-memory killer ended a process of this cgroup
    meanwhile (None: not known)."""
    from ...core.common import FlopscopeError, address_space_limit, out_of_memory

    what = _what_it_worked_on()
    how = f"{ending} after it reached {peak_bytes / 2**30:.2f} GiB"
    limit = address_space_limit()
    if ending == "SIGKILL" and oom_killed is not False:
        likely = "" if oom_killed else ", most likely"
        return out_of_memory(
            what, f"out of memory: the kernel's out-of-memory killer ended it{likely} ({how})"
        )
    if ending == "SIGKILL":
        return FlopscopeError(what, f"killed from outside flopscope ({how})", "run it again")
    if limit is not None:
        return out_of_memory(
            what,
            f"out of memory, most likely: a native library ended it ({how}) under an address-space"
            f" limit (ulimit -v) of {limit / 2**30:.2g} GiB",
        )
    return FlopscopeError(
        what,
        f"a native library crashed ({how})",
        "the file may be damaged: copy it again from the GPU host; if it is whole, this is a bug in"
        " flopscope or a library it uses: run it again under `python -X faulthandler -m"
        " flopscope.tui.cli` to see where",
    )


def _what_it_worked_on() -> str:
    """The report the command was given, or the command itself: what the one line names."""
    from ...core.common import FlopscopeError
    from .main import parsed

    try:
        args = parsed(sys.argv[1:])
    except (SystemExit, FlopscopeError):  # the file went away meanwhile: name the command
        return "flopscope"
    path = getattr(args, "path", None)
    return str(path) if path else getattr(args, "command", None) or "flopscope"
