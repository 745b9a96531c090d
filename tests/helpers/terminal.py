"""Run the flopscope command on a real pseudo-terminal (stdin, stdout and stderr), as a user's shell
does."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time


def in_terminal(
    argv: list[str], interrupt_when: bytes | None = None, timeout: float = 120
) -> tuple[int, str]:
    """Run flopscope with stdin, stdout and stderr on a real pseudo-terminal; with `interrupt_when`,
    send SIGINT once that text is on the screen (as Ctrl-C does). Returns (exit code, everything
    written)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: flopscope on the terminal
        os.environ["COLUMNS"] = "150"
        # From the first launch: a faster machine reads this report in under the default half second
        # (CI did).
        os.environ["FLOPSCOPE_PROGRESS_AFTER"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "flopscope.tui.cli", *argv])
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
