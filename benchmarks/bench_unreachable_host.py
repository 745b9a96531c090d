"""What a host that never answers costs `flopscope profile --host`: wall time and ssh connections
made.

The host is a TCP listener on 127.0.0.1 that accepts and never speaks (a firewall that drops packets
looks the same to ssh: it waits out ConnectTimeout). Target (issue 24): one connection timeout, not
one per step; before the fix, 3 connections and ~31 s at the default --connect-timeout 10.

    python benchmarks/bench_unreachable_host.py [--timeouts 2 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def silent_host() -> tuple[socket.socket, list]:
    sock = socket.create_server(("127.0.0.1", 0), backlog=16)
    accepted: list = []

    def accept() -> None:
        while True:
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return sock, accepted


def one_run(timeout: int, folder: Path) -> tuple[float, int]:
    sock, accepted = silent_host()
    config = folder / "ssh_config"
    config.write_text(
        f"Host silent\n  HostName 127.0.0.1\n  Port {sock.getsockname()[1]}\n"
        "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
    )
    start = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "flopscope.tui.cli",
            "profile",
            "--host",
            "silent",
            "--ssh-config",
            str(config),
            "--connect-timeout",
            str(timeout),
            "--ncu",
            "ncu",
            "--no-tui",
            "--",
            "true",
        ],
        capture_output=True,
        env={**os.environ, "FLOPSCOPE_HOME": str(folder / "home")},
        timeout=300,
    )
    wall = time.monotonic() - start
    sock.close()
    return wall, len(accepted)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeouts", type=int, nargs="+", default=[2, 10])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'--connect-timeout':>18} {'median wall s':>14} {'connections':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for timeout in args.timeouts:
            results = [one_run(timeout, Path(tmp)) for _ in range(args.runs)]
            print(
                f"{timeout:>18} {statistics.median(w for w, _ in results):>14.1f}"
                f" {max(c for _, c in results):>12}"
            )


if __name__ == "__main__":
    main()
