"""Run the flopscope command on a real pseudo-terminal (stdin, stdout and stderr), as a user's shell
does."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time


def in_terminal(
    argv: list[str],
    interrupt_when: bytes | None = None,
    timeout: float = 120,
    size: tuple[int, int] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run flopscope with stdin, stdout and stderr on a real pseudo-terminal; with `interrupt_when`,
    send SIGINT once that text is on the screen (as Ctrl-C does). Returns (exit code, everything
    written). Without `size` the table is 150 columns wide (COLUMNS) and a read's progress shows at
    once; with `size` (columns, lines) the terminal itself has that size. `env` is added last."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: flopscope on the terminal
        # os.environ, not the process's C environment: a library may have put COLUMNS there
        child = dict(os.environ)
        if size is None:
            child["COLUMNS"] = "150"
            # From the first launch: a faster machine reads this report in under the default half
            # second (CI did).
            child["FLOPSCOPE_PROGRESS_AFTER"] = "0"
        else:  # the terminal's own size, set below
            child.pop("COLUMNS", None)
            child.pop("LINES", None)
        child.update(env or {})
        os.execve(sys.executable, [sys.executable, "-m", "flopscope.tui.cli", *argv], child)
    if size is not None:  # long before the interpreter's start has flopscope lay a table out
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    out = b""
    deadline = time.monotonic() + timeout
    interrupted = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if interrupt_when and not interrupted and interrupt_when in out:
            os.kill(pid, signal.SIGINT)
            interrupted = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def stopped_in_one_line(code: int, out: str) -> None:
    """A read stopped by Ctrl-C: exit 130, no traceback, and after the progress line is cleared, one
    line."""
    assert code == 130, out[-2000:]
    assert "Traceback" not in out
    after = out.rsplit("\r\x1b[K", 1)[1]  # the progress line cleared first
    assert after.strip() == "flopscope: stopped", repr(after)
