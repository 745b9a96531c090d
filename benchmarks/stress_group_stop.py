"""Stop signals sent to flopscope's whole process group, many times over: how often the command does
not end as one clean stop (exit 130, the one line `flopscope: stopped`). `timeout`, `kill -- -PGID`
and Slurm signal every process; the worker then has the signal twice (from the sender, and passed on
by the watcher), and a race between the two shows only now and then: too rarely and too slowly for
the test suite (tests/cli/test_watcher.py::test_a_stop_sent_to_the_whole_group_stops_once runs it
once per signal).

    python benchmarks/stress_group_stop.py [--runs 30] [--signals SIGTERM SIGHUP SIGINT]
    # another version:
    PYTHONPATH=/path/to/other/checkout/shim python benchmarks/stress_group_stop.py
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers.processes import open_for_writing, reading_a_pipe, worker_of


def one_stop(sig: signal.Signals, folder: Path) -> tuple[int, str]:
    """flopscope reading a FIFO that holds the start of a page, stopped by `sig` to its group:
    (exit, stderr)."""
    fifo = folder / "page.csv"
    os.mkfifo(fifo)
    env = {**os.environ, "FLOPSCOPE_HOME": str(folder / "home")}
    command = [sys.executable, "-m", "flopscope.tui.cli", "report", str(fifo)]
    proc = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    writer = open_for_writing(fifo)
    try:
        os.write(writer, b'"ID","Kernel Name"\n')
        if not reading_a_pipe(worker_of(proc.pid)):
            raise SystemExit("flopscope never came to read the FIFO")
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    return proc.returncode, err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--signals", nargs="*", default=["SIGTERM", "SIGHUP", "SIGINT"])
    args = parser.parse_args()
    print(f"{'signal':<8} {'runs':>5} {'unclean':>8}  first unclean ending")
    for name in args.signals:
        bad = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as folder:
                code, err = one_stop(signal.Signals[name], Path(folder))
            if (code, err) != (130, "flopscope: stopped\n"):
                bad.append(
                    f"exit {code}: {err.strip().splitlines()[-1] if err.strip() else '(nothing)'}"
                )
        print(f"{name:<8} {args.runs:>5} {len(bad):>8}  {bad[0] if bad else ''}", flush=True)


if __name__ == "__main__":
    main()
