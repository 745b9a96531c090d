"""The app in a real terminal: a tmux session driven by keys and read back as text."""

from __future__ import annotations

import os
import subprocess
import time


class Tmux:
    """One private tmux server (its own socket), so nothing else running in tmux is touched."""

    def __init__(self) -> None:
        self.socket = f"flopscope-test-{os.getpid()}"

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10)
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
