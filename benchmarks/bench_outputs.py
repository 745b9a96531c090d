"""Whole `flopscope report` / `export` processes on big raw CSV pages, beside a bare
`pandas.read_csv` of the same file: what a user waits for, from the command's start (issue 25).

The pages repeat the 16 real launches of ../shared/fixtures/ncu/b200_torch_sdpa_auto_raw.csv (a real
475-column `ncu --csv --page raw` page) with fresh launch IDs:
  wide       every column, as ncu printed it narrow     the identity columns and the metrics
  flopscope reads +inst      the same with `--print-metric-instances details` cells (`128 (0: 128)`)
  in the columns ncu prints
             instanced (those of the project's H100 capture that hold one, tests/data/gpu/...)
Each command runs in a fresh process (median of --repeat runs; peak RSS by GNU time). Targets: every
variant within 2x the bare read and under 1 GB at 100k launches; `export` within 1.5x (issue 18).

    python benchmarks/bench_outputs.py [--sizes 100000] [--variants narrow narrow+inst wide
    wide+inst] python benchmarks/bench_outputs.py --baseline REV   # a git revision's flopscope
    beside this checkout's python benchmarks/bench_outputs.py --cache first    # a user's first
    open: the table cache written too python benchmarks/bench_outputs.py --cache warm     # a later
    open of the same file: read from the cache

--cache off (the default, as in earlier tables) passes --no-cache: the read and the work alone.
`first` empties the cache before each run, so every run reads the CSV and writes the cache entries,
as the first open of a file does; `warm` fills the cache once and times the opens that follow.

--baseline REV unpacks REV (`bench_startup.checkout`) and runs its commands too, each run of one
right after the same run of the other, so a slow spell on a noisy machine falls on both columns
alike. Bytecode is cached in a temporary folder and each command runs once before timing, as an
installed flopscope (whose pip install compiled it) runs: this machine's PYTHONDONTWRITEBYTECODE
would otherwise compile ~60 modules on every start, ~0.1 s that the bare read, all of whose
libraries come compiled, does not pay."""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "fixtures" / "ncu" / "b200_torch_sdpa_auto_raw.csv"
INSTANCED_FROM = (
    ROOT / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "gemm_bf16_4096x4096x4096.csv.gz"
)
IDENT = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
}
COMMANDS = {
    "report": ["report", "{path}"],
    "report --by launch": ["report", "{path}", "--by", "launch"],
    "report --by launch --json": ["report", "{path}", "--by", "launch", "--json"],
    "export .csv": ["export", "{path}", "-o", "{out}.csv"],  # by kernel name, the default
    "export --by launch .csv": ["export", "{path}", "--by", "launch", "-o", "{out}.csv"],
    "export --by launch .parquet": ["export", "{path}", "--by", "launch", "-o", "{out}.parquet"],
    "export --by launch .json": ["export", "{path}", "--by", "launch", "-o", "{out}.json"],
}


def _rows(path: Path) -> list[list[str]]:
    csv.field_size_limit(2**31 - 1)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
        lines = handle.read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    return list(csv.reader(lines[start:]))


def instanced_metrics() -> set[str]:
    """Metrics the H100 capture (made with flopscope's own import arguments) prints as `N (i: v;
    ...)`."""
    header, _, first = _rows(INSTANCED_FROM)[:3]
    return {
        h for h, c in zip(header, first, strict=True) if "__" in h and " (" in c and c[:1].isdigit()
    }


def build(n: int, variant: str, out: Path) -> None:
    from flopscope.core.readers.wanted import wanted

    header, units, *launches = _rows(SOURCE)
    keep = [k for k, h in enumerate(header) if "narrow" not in variant or h in IDENT or wanted(h)]
    inst = instanced_metrics() if "inst" in variant else set()
    wrap = [header[k] in inst for k in keep]
    launches = [
        [(f"{r[k]} (0: {r[k]})" if w and r[k] else r[k]) for k, w in zip(keep, wrap, strict=True)]
        for r in launches
    ]
    with out.open("w", newline="") as handle:
        w = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow([header[k] for k in keep])
        w.writerow([units[k] for k in keep])
        for i in range(n):
            w.writerow([str(i), *launches[i % len(launches)][1:]])


def timed(argv: list[str], env: dict, empty_cache: bool = False) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process, by GNU time; with `empty_cache` (`--cache
    first`), after emptying the table cache of its FLOPSCOPE_HOME."""
    if empty_cache:
        shutil.rmtree(Path(env["FLOPSCOPE_HOME"]) / "cache", ignore_errors=True)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as log:
        subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", log.name, *argv],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wall, rss = log.read().split()[-2:]
    return float(wall), int(rss) / 1024


def median_runs(
    runs: list[tuple[list[str], dict]], repeat: int, empty_cache: bool = False
) -> list[tuple[float, float]]:
    """Median wall seconds and peak RSS of each (argv, env), after one untimed run each (it writes
    the bytecode cache); they take turns run by run, so a slow spell of a noisy machine falls on all
    of them alike."""
    for argv, env in runs:
        timed(argv, env, empty_cache)
    times = [[timed(argv, env, empty_cache) for argv, env in runs] for _ in range(repeat)]
    return [
        (statistics.median(t[k][0] for t in times), max(t[k][1] for t in times))
        for k in range(len(runs))
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument(
        "--variants", nargs="*", default=["narrow", "narrow+inst", "wide", "wide+inst"]
    )
    parser.add_argument(
        "--commands", nargs="*", default=list(COMMANDS), choices=list(COMMANDS), metavar="CMD"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--baseline", metavar="REV", help="a git revision to time beside this checkout"
    )
    parser.add_argument(
        "--cache", choices=["off", "first", "warm"], default="off", help="see the docstring"
    )
    args = parser.parse_args()
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    env.pop("PYTHONUNBUFFERED", None)
    env.update(COLUMNS="160", FLOPSCOPE_NO_CACHE="1" if args.cache == "off" else "0")
    env["FLOPSCOPE_NO_OUTPUT_CACHE"] = "1"  # the work each time: a repeat would be printed from it
    columns = f"{'s':>7} {'x read':>7} {'RSS MB':>7}"
    head = (
        f"{'launches':>9} {'variant':<12} {'MB':>6} {'command':<28} {'read s':>7} {'RSS MB':>7}  "
        f" {columns}"
    )
    print(f"cache: {args.cache}")
    print(head + (f"   {columns}  ({args.baseline})" if args.baseline else ""))
    with tempfile.TemporaryDirectory() as tmp:
        env["FLOPSCOPE_HOME"] = tmp  # the table cache and store of a throwaway home
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pyc")
        envs = [env]
        if args.baseline:
            from bench_startup import checkout

            base = Path(tmp) / "baseline"
            base.mkdir()
            envs.append({**env, "PYTHONPATH": str(checkout(args.baseline, base))})
        for n in args.sizes:
            for variant in args.variants:
                path = Path(tmp) / f"raw_{n}_{variant}.csv"
                build(n, variant, path)
                size = path.stat().st_size / 1e6
                bare = [
                    sys.executable,
                    "-c",
                    f"import pandas; pandas.read_csv({str(path)!r}, low_memory=False)",
                ]
                for name in args.commands:
                    argv = [
                        sys.executable,
                        "-m",
                        "flopscope.tui.cli",
                        *(a.format(path=path, out=Path(tmp) / "out") for a in COMMANDS[name]),
                        *(["--no-cache"] if args.cache == "off" else []),
                    ]
                    # the bare read beside each command: the ratio is to reads made in the same
                    # minutes
                    (read_s, read_rss), *ours = median_runs(
                        [(bare, env), *((argv, e) for e in envs)],
                        args.repeat,
                        empty_cache=args.cache == "first",
                    )
                    cells = [f"{s:>7.2f} {s / read_s:>7.2f} {rss:>7.0f}" for s, rss in ours]
                    print(
                        f"{n:>9} {variant:<12} {size:>6.0f} {name:<28} {read_s:>7.2f}"
                        f" {read_rss:>7.0f}   " + "   ".join(cells),
                        flush=True,
                    )
                path.unlink()


if __name__ == "__main__":
    main()
