"""The app in a real terminal: a tmux session driven by keys and read back as text."""

from __future__ import annotations

import itertools
import os
import subprocess
import time

_servers = itertools.count()


class Tmux:
    """One private tmux server (its own socket), so nothing else running in tmux is touched.

    Each instance has a socket of its own: a test that reused the last test's socket could start its
    session in the server that `kill-server` was still shutting down, and lose it (CI, stop 35)."""

    def __init__(self) -> None:
        self.socket = f"flopscope-test-{os.getpid()}-{next(_servers)}"

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        if args[0] == "new-session" and done.returncode != 0:
            raise AssertionError(f"tmux could not start the session: {done.stderr.strip()}")
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "app")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen()}")
