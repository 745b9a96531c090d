"""Whole `flopscope report` / `export` processes on big raw CSV pages, beside a bare `pandas.read_csv` of the same
file: what a user waits for, from the command's start (issue 25).

The pages repeat the 16 real launches of ../shared/fixtures/ncu/b200_torch_sdpa_auto_raw.csv (a real 475-column
`ncu --csv --page raw` page) with fresh launch IDs:
  wide       every column, as ncu printed it
  narrow     the identity columns and the metrics flopscope reads
  +inst      the same with `--print-metric-instances details` cells (`128 (0: 128)`) in the columns ncu prints
             instanced (those of the project's H100 capture that hold one, tests/data/gpu/...)
Each command runs in a fresh process (median of --repeat runs; peak RSS by GNU time). Targets: every variant
within 2x the bare read and under 1 GB at 100k launches.

    python benchmarks/bench_outputs.py [--sizes 100000] [--variants narrow narrow+inst wide wide+inst]
    PYTHONPATH=/path/to/other/checkout/shim python benchmarks/bench_outputs.py   # the same for another version
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "fixtures" / "ncu" / "b200_torch_sdpa_auto_raw.csv"
INSTANCED_FROM = ROOT / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "gemm_bf16_4096x4096x4096.csv.gz"
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
    """Metrics the H100 capture (made with flopscope's own import arguments) prints as `N (i: v; ...)`."""
    header, _, first = _rows(INSTANCED_FROM)[:3]
    return {h for h, c in zip(header, first, strict=True) if "__" in h and " (" in c and c[:1].isdigit()}


def build(n: int, variant: str, out: Path) -> None:
    from flopscope.core.readers.wanted import wanted

    header, units, *launches = _rows(SOURCE)
    keep = [k for k, h in enumerate(header) if "narrow" not in variant or h in IDENT or wanted(h)]
    inst = instanced_metrics() if "inst" in variant else set()
    wrap = [header[k] in inst for k in keep]
    launches = [
        [(f"{r[k]} (0: {r[k]})" if w and r[k] else r[k]) for k, w in zip(keep, wrap, strict=True)] for r in launches
    ]
    with out.open("w", newline="") as handle:
        w = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow([header[k] for k in keep])
        w.writerow([units[k] for k in keep])
        for i in range(n):
            w.writerow([str(i), *launches[i % len(launches)][1:]])


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process, by GNU time."""
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


def median_run(argv: list[str], env: dict, repeat: int) -> tuple[float, float]:
    runs = [timed(argv, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--variants", nargs="*", default=["narrow", "narrow+inst", "wide", "wide+inst"])
    parser.add_argument("--commands", nargs="*", default=list(COMMANDS), choices=list(COMMANDS), metavar="CMD")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "COLUMNS": "160", "FLOPSCOPE_NO_CACHE": "1"}
    env.pop("PYTHONUNBUFFERED", None)
    print(f"{'launches':>9} {'variant':<12} {'MB':>6} {'command':<28} {'s':>7} {'x read':>7} {'RSS MB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        env["FLOPSCOPE_HOME"] = tmp  # the table cache and store of a throwaway home
        for n in args.sizes:
            for variant in args.variants:
                path = Path(tmp) / f"raw_{n}_{variant}.csv"
                build(n, variant, path)
                size = path.stat().st_size / 1e6
                bare = [sys.executable, "-c", f"import pandas; pandas.read_csv({str(path)!r}, low_memory=False)"]
                base_s, base_rss = median_run(bare, env, args.repeat)
                print(
                    f"{n:>9} {variant:<12} {size:>6.0f} {'pandas.read_csv':<28} {base_s:>7.2f} {1:>7.2f} "
                    f"{base_rss:>7.0f}",
                    flush=True,
                )
                for name in args.commands:
                    argv = [
                        sys.executable,
                        "-m",
                        "flopscope.tui.cli",
                        *(a.format(path=path, out=Path(tmp) / "out") for a in COMMANDS[name]),
                        "--no-cache",
                    ]
                    s, rss = median_run(argv, env, args.repeat)
                    print(
                        f"{n:>9} {variant:<12} {size:>6.0f} {name:<28} {s:>7.2f} {s / base_s:>7.2f} {rss:>7.0f}",
                        flush=True,
                    )
                path.unlink()


if __name__ == "__main__":
    main()
