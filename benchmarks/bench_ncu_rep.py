"""Real-size .ncu-rep reports: whole `flopscope report` processes, time and peak memory, beside
ncu's own import.

    python benchmarks/bench_ncu_rep.py [--launches 1000 10000] [--repeat 3] [--source REPORT]
    [--skip ...]

Builds each report from a real capture (make_big_report.py: its result blocks repeated, as ncu
appends one block per launch), then runs, each `--repeat` times (medians printed):
  stream       flopscope report FILE               the streaming reader, cache off ncu_report   the
  same with FLOPSCOPE_NCU_REP_READER=ncu_report (the reader before the streaming one) cached
  flopscope report FILE, second open  (the finished report's cache entry, report_cache.py) start-up
  a process importing what `report` imports, and no more: `cached - start-up` is the work
               a cached re-open does after start-up (the target: 0.5 s at 100k)
  ncu --import ncu --import FILE --csv --page raw  (when FLOPSCOPE_REAL_NCU names an ncu;
  .ci/fetch_ncu.sh)
Each cell: wall seconds, user+system CPU seconds (on a shared machine the steadier of the two) and
peak resident memory, by GNU time (/usr/bin/time); `x ncu` is how many times faster than ncu's
import (wall, CPU). Long: minutes at 10k, mostly ncu_report and ncu. ncu_report holds the whole
report in memory (4.4 GB at 10k): it is skipped above 20,000 launches; `--skip ncu` leaves out ncu's
import (15 min at 100k)."""

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
SOURCE = (
    REPO / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "train_transformer_bs8.ncu-rep.xz"
)
FLOPSCOPE = (
    [sys.executable, "-m", "flopscope.tui.cli"] if not shutil.which("flopscope") else ["flopscope"]
)
# What `flopscope report FILE` has imported before it opens FILE.
START_UP = [
    sys.executable,
    "-c",
    (
        "import flopscope.tui.cli.main, flopscope.tui.cli.view, flopscope.core.report.report,"
        " pyarrow.parquet, pandas"
    ),
]


def _run(cmd: list[str], env: dict) -> tuple[float, float, float]:
    """(seconds, CPU seconds, peak RSS in MB) of one whole process. CPU and RSS come from GNU time:
    the rusage Python's os.wait4 gives a forked child starts from the parent's peak, which here
    holds a whole report."""
    with tempfile.NamedTemporaryFile("r") as usage:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-o", usage.name, "-f", "%U %S %M", *cmd],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - start
        if done.returncode:
            raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}")
        user, system, rss = usage.read().split()[-3:]
        return seconds, float(user) + float(system), int(rss) / 1024


def _median(cmd: list[str], env: dict, repeat: int) -> tuple[float, float, float]:
    """Median wall and CPU seconds, largest peak RSS, of `repeat` runs."""
    runs = [_run(cmd, env) for _ in range(repeat)]
    return (
        statistics.median(r[0] for r in runs),
        statistics.median(r[1] for r in runs),
        max(r[2] for r in runs),
    )


def _cell(run: tuple[float, float, float] | None) -> str:
    return f"{run[0]:7.2f} s {run[1]:6.2f} cpu {run[2]:5.0f} MB" if run else f"{'-':>27}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--skip", nargs="*", default=[], choices=["ncu_report", "ncu"])
    args = parser.parse_args()
    ncu = os.environ.get("FLOPSCOPE_REAL_NCU")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = plain_copy(args.source, folder)
        home = folder / "home"
        base = {**os.environ, "FLOPSCOPE_HOME": str(home)}
        fresh = {**base, "FLOPSCOPE_NO_CACHE": "1"}
        print(
            f"source: {args.source.name}; medians of {args.repeat} whole processes (wall, CPU,"
            " largest peak RSS)"
        )
        if not ncu:
            print("(no FLOPSCOPE_REAL_NCU: ncu's import not timed)")
        names = ("stream", "cached", "ncu_report", "ncu --import")
        start_up = _median(START_UP, base, args.repeat)
        print(f"start-up (imports of `report`): {start_up[0]:.2f} s, {start_up[1]:.2f} cpu")
        print(
            f"{'launches':>8} {'MB':>5}  "
            + "  ".join(f"{n:>27}" for n in names)
            + f"  {'x ncu':>11}  {'cached - start-up':>17}"
        )
        for launches in args.launches:
            report = repeat_launches(source, folder / f"{launches}.ncu-rep", launches=launches)
            cmd = [*FLOPSCOPE, "report", str(report)]
            stream = _median(cmd, fresh, args.repeat)
            # writes the cache entry
            subprocess.run(cmd, env=base, stdout=subprocess.DEVNULL, check=True)
            cached = _median(cmd, base, args.repeat)
            whole = None
            if "ncu_report" not in args.skip and launches <= 20_000:
                whole = _median(
                    cmd, {**fresh, "FLOPSCOPE_NCU_REP_READER": "ncu_report"}, args.repeat
                )
            imported = None
            if ncu and "ncu" not in args.skip:
                imported = _median(
                    [ncu, "--import", str(report), "--csv", "--page", "raw"], base, args.repeat
                )
            ratio = (
                f"{imported[0] / stream[0]:4.1f} {imported[1] / stream[1]:4.1f}"
                if imported
                else "-"
            )
            size = report.stat().st_size / 1e6
            cells = "  ".join(_cell(c) for c in (stream, cached, whole, imported))
            work = f"{cached[0] - start_up[0]:.2f} s"
            print(f"{launches:>8} {size:>5.0f}  {cells}  {ratio:>11}  {work:>17}", flush=True)
            report.unlink()
            shutil.rmtree(home / "cache", ignore_errors=True)


if __name__ == "__main__":
    main()
