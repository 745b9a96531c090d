"""Real-size .ncu-rep reports: whole `flopscope report` processes, time and peak memory, beside ncu's own import.

    python benchmarks/bench_ncu_rep.py [--launches 1000 10000] [--repeat 3] [--source REPORT]

Builds each report from a real capture (make_big_report.py: its result blocks repeated, as ncu appends one
block per launch), then runs, each `--repeat` times (medians printed):
  stream       flopscope report FILE               the streaming reader, cache off
  ncu_report   the same with FLOPSCOPE_NCU_REP_READER=ncu_report (the reader before the streaming one)
  cached       flopscope report FILE, second open  (the table cache's Parquet entry)
  ncu --import ncu --import FILE --csv --page raw  (when FLOPSCOPE_REAL_NCU names an ncu; .ci/fetch_ncu.sh)
Peak memory is each process's maximum resident set, by GNU time (/usr/bin/time).
Long: minutes at 10k, mostly ncu_report and ncu.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from make_big_report import plain_copy, repeat_launches

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "train_transformer_bs8.ncu-rep.xz"
FLOPSCOPE = [sys.executable, "-m", "flopscope.tui.cli"] if not shutil.which("flopscope") else ["flopscope"]


def _run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one whole process. The RSS comes from GNU time: the rusage Python's
    os.wait4 gives a forked child starts from the parent's peak, which here holds a whole report."""
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-o", rss.name, "-f", "%M", *cmd],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - start
        if done.returncode:
            raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}")
        return seconds, int(rss.read().split()[-1]) / 1024


def _median(cmd: list[str], env: dict, repeat: int, before=None) -> str:
    times, peaks = [], []
    for _ in range(repeat):
        if before:
            before()
        seconds, peak = _run(cmd, env)
        times.append(seconds)
        peaks.append(peak)
    return f"{statistics.median(times):7.2f} s {max(peaks):7.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, default=SOURCE)
    args = parser.parse_args()
    ncu = os.environ.get("FLOPSCOPE_REAL_NCU")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = plain_copy(args.source, folder)
        home = folder / "home"
        base = {**os.environ, "FLOPSCOPE_HOME": str(home)}
        fresh = {**base, "FLOPSCOPE_NO_CACHE": "1"}
        print(f"source: {args.source.name}; medians of {args.repeat} whole processes (time, largest peak RSS)")
        print(f"{'launches':>8} {'MB':>5}  {'stream':>18}  {'cached':>18}  {'ncu_report':>18}  {'ncu --import':>18}")
        for launches in args.launches:
            report = repeat_launches(source, folder / f"{launches}.ncu-rep", launches=launches)
            cmd = [*FLOPSCOPE, "report", str(report)]
            cells = [_median(cmd, fresh, args.repeat)]
            subprocess.run(cmd, env=base, stdout=subprocess.DEVNULL, check=True)  # writes the cache entry
            cells.append(_median(cmd, base, args.repeat))
            cells.append(_median(cmd, {**fresh, "FLOPSCOPE_NCU_REP_READER": "ncu_report"}, args.repeat))
            cells.append(
                _median([ncu, "--import", str(report), "--csv", "--page", "raw"], base, args.repeat)
                if ncu
                else "(no FLOPSCOPE_REAL_NCU)"
            )
            size = report.stat().st_size / 1e6
            print(f"{launches:>8} {size:>5.0f}  " + "  ".join(f"{c:>18}" for c in cells), flush=True)
            report.unlink()
            shutil.rmtree(home / "cache", ignore_errors=True)


if __name__ == "__main__":
    main()
