"""Smoke test of the real app in a real terminal (tmux, 80x24, 256 colours): the keys a person would
press."""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from ..helpers.tmux import Tmux

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "ncu"
REPORT = FIXTURES / "h100pcie_ee384_cub_agents_full.ncu-rep"

pytestmark = [
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"
    ),
    pytest.mark.skipif(not REPORT.exists(), reason=f"shared ncu fixture not found at {REPORT}"),
]


def test_app_in_tmux_help_group_quit(tmp_path):
    tmux = Tmux()
    status = tmp_path / "exit"
    # The module form of the console script, with this venv's Python; COLORTERM unset like a plain
    # SSH login.
    command = (
        f"env -u COLORTERM TERM=xterm-256color {shlex.quote(sys.executable)} -m flopscope.tui.cli"
        f" open {shlex.quote(str(REPORT))}; echo $? > {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "80", "-y", "24", command)
    try:
        tmux.wait_for("rows · by name")
        # the summary above the table may be painted a frame after the table's rows
        shown = tmux.wait_for("NVIDIA H100 PCIe")
        assert "rows · by name" in shown and "generate_encoded_signal" in shown
        tmux("send-keys", "-t", "app", "?")
        assert "Keys: Kernels screen" in tmux.wait_for("Keys:")
        tmux("send-keys", "-t", "app", "Escape")
        deadline = time.monotonic() + 10
        while "Keys:" in tmux.screen() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "Keys:" not in tmux.screen()
        tmux("send-keys", "-t", "app", "g")
        shown = tmux.wait_for("18/18 rows · by launch")
        assert all(len(line) <= 80 for line in shown.splitlines())
        tmux("send-keys", "-t", "app", "q")
        deadline = time.monotonic() + 10
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "0"
    finally:
        tmux("kill-server")


def test_app_in_tmux_draws_while_ncu_report_reads_ahead(tmp_path):
    """`open FILE` starts reading before Textual starts, and ncu_report's read points fd 2 (where
    Textual draws) at a log sink meanwhile: the app still draws on the terminal, whose stderr the
    read-ahead took first."""
    pytest.importorskip("ncu_report")
    tmux = Tmux()
    env = (
        "env -u COLORTERM TERM=xterm-256color FLOPSCOPE_NCU_REP_READER=ncu_report"
        " FLOPSCOPE_NO_CACHE=1"
    )
    command = (
        f"{env} {shlex.quote(sys.executable)} -m flopscope.tui.cli open {shlex.quote(str(REPORT))};"
        " sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "80", "-y", "24", command)
    try:
        tmux.wait_for("rows · by name")
        # the summary above the table may be painted a frame after the table's rows
        shown = tmux.wait_for("NVIDIA H100 PCIe")
        assert "rows · by name" in shown and "generate_encoded_signal" in shown
        tmux("send-keys", "-t", "app", "q")
    finally:
        tmux("kill-server")
