"""Issue 44's third target, a 100k-launch `.ncu-rep`: first open <= 6 s, cached <= 1.0 s, peak
<= 1 GB, side by side with a baseline revision and with `ncu --import FILE --csv --page raw`.

    python benchmarks/bench_big_report.py [--launches 100000] [--runs 5] [--baseline REV]
        [--report FILE] [--keep FILE] [--ncu]

Builds the report from the H100 transformer step (make_big_report.py: its result blocks repeated,
2 GB at 100k; under /tmp unless --report names one already built, --keep keeps it there), then
times whole `flopscope report FILE` processes, this checkout and REV taking turns (A B A B), each
with its own empty data home:
  first open   an empty cache (the reader, counters, grouping, the cache entries written, print)
  cached       the same command again: the table and report caches' read (the output cache off,
               FLOPSCOPE_NO_OUTPUT_CACHE=1, so that both revisions do the same work)
  replayed     again with the output cache on (this checkout only where REV predates it)
Each cell: the median wall seconds, the median user+system CPU seconds (on a shared 2-core machine
the steadier of the two) and the largest peak RSS, by GNU time. --ncu times NVIDIA's own import once
(FLOPSCOPE_REAL_NCU; minutes at 100k)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_ncu_rep import SOURCE, _run
from bench_startup import checkout
from make_big_report import plain_copy, repeat_launches

TARGETS = {"first open": 6.0, "cached": 1.0}
PEAK_MB = 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", metavar="REV", help="a git revision timed beside this one")
    parser.add_argument("--report", type=Path, help="a report built already (not deleted)")
    parser.add_argument("--keep", type=Path, help="build the report here and keep it")
    parser.add_argument("--ncu", action="store_true", help="time ncu --import once")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        report = args.report or _built(args, work)
        sides = _sides(args.baseline, work)
        cells = _timed(sides, report, args.runs, work)
        if args.ncu:
            cells["ncu --import"] = {"first open": [_ncu(report)]}
        _print(report, cells, args.runs)
        if not args.report and not args.keep:
            report.unlink()


def _built(args: argparse.Namespace, work: Path) -> Path:
    out = args.keep or work / f"{args.launches}.ncu-rep"
    return repeat_launches(plain_copy(SOURCE, work), out, launches=args.launches)


def _sides(baseline: str | None, work: Path) -> dict[str, dict[str, str]]:
    """Each side's environment: bytecode cached outside the tree (as an installed flopscope runs),
    the baseline's tree ahead of this checkout on PYTHONPATH."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    env["PYTHONPYCACHEPREFIX"] = str(work / "pyc")
    sides = {"this checkout": env}
    if baseline:
        (work / "base").mkdir()
        sides[baseline] = {**env, "PYTHONPATH": str(checkout(baseline, work / "base"))}
    return sides


def _timed(
    sides: dict[str, dict[str, str]], report: Path, runs: int, work: Path
) -> dict[str, dict[str, list[tuple[float, float, float]]]]:
    """(wall, CPU, peak MB) of every run, by side and row; the sides take turns."""
    cmd = [sys.executable, "-m", "flopscope.tui.cli", "report", str(report)]
    cells: dict[str, dict[str, list[tuple[float, float, float]]]] = {s: {} for s in sides}
    for run in range(runs + 1):  # the first round compiles the bytecode: not counted
        for name, env in sides.items():
            home = work / "home" / name.replace(" ", "_")
            shutil.rmtree(home, ignore_errors=True)
            env = {**env, "FLOPSCOPE_HOME": str(home)}
            quiet = {**env, "FLOPSCOPE_NO_OUTPUT_CACHE": "1"}
            rows = {
                "first open": _run(cmd, quiet),
                "cached": _run(cmd, quiet),
                "replayed": (_run(cmd, env), _run(cmd, env))[1],  # the first writes the entry
            }
            if run:
                for row, cell in rows.items():
                    cells[name].setdefault(row, []).append(cell)
            print(f"run {run} {name}: " + ", ".join(f"{r} {c[0]:.2f} s" for r, c in rows.items()))
    return cells


def _ncu(report: Path) -> tuple[float, float, float]:
    ncu = os.environ.get("FLOPSCOPE_REAL_NCU")
    if not ncu:
        raise SystemExit("--ncu: set FLOPSCOPE_REAL_NCU to an ncu (.ci/fetch_ncu.sh)")
    return _run([ncu, "--import", str(report), "--csv", "--page", "raw"], dict(os.environ))


def _print(
    report: Path, cells: dict[str, dict[str, list[tuple[float, float, float]]]], runs: int
) -> None:
    size = report.stat().st_size / 1e6
    print(f"\n{report.name}: {size:,.0f} MB; medians of {runs} (wall s, CPU s), largest peak RSS")
    rows = ("first open", "cached", "replayed")
    print(f"{'':>16}" + "".join(f"{row:>30}" for row in rows))
    for name, by_row in cells.items():
        print(f"{name:>16}" + "".join(f"{_cell(by_row.get(row)):>30}" for row in rows))
    print(f"{'target':>16}" + "".join(f"{_target(row):>30}" for row in rows))


def _cell(runs: list[tuple[float, float, float]] | None) -> str:
    if not runs:
        return "-"
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    return f"{wall:6.2f} s {cpu:6.2f} cpu {max(r[2] for r in runs):5.0f} MB"


def _target(row: str) -> str:
    return f"<= {TARGETS[row]:.1f} s, <= {PEAK_MB} MB" if row in TARGETS else ""


if __name__ == "__main__":
    main()
