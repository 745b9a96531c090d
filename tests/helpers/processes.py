"""A running flopscope's processes: the command's own process only watches a worker
(tui/cli/watcher.py), which does the work, holds the threads and reads the input."""

from __future__ import annotations

import os
import time
from pathlib import Path


def worker_of(pid: int, within_s: float = 20.0) -> int:
    """The worker process of the flopscope started as `pid`: its one child."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.02)
    raise AssertionError(f"flopscope ({pid}) started no worker within {within_s} s")


def open_for_writing(fifo: Path, within_s: float = 30.0) -> int:
    """The write end of `fifo`, once a reader has opened it (flopscope reading it as a report)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO until a reader opens it
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def reading_a_pipe(pid: int, within_s: float = 20.0) -> bool:
    """Whether process `pid` comes to wait for a pipe or FIFO to have more (its imports done, its
    signal handlers set): in read(2), or in select(2)/poll(2) as flopscope waits on a FIFO."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text()
            syscall = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            return False
        # x86-64 numbers
        if "pipe_read" in wchan or syscall[:1] in (["0"], ["7"], ["23"], ["270"], ["271"]):
            return True
        time.sleep(0.05)
    return False


def gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether process `pid` ends (or is a zombie) within `within_s`."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False
