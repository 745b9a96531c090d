"""Whole `flopscope report` processes on big `ncu --csv --page details` pages (one row per launch,
section and metric), beside a bare `pandas.read_csv` of the same file (issue 18.5: the details
reader at pyarrow's speed).

The pages repeat the launches of ../shared/fixtures/ncu/a100_gemm_printfp_details.csv (a real
details page, ncu's default sections, ~3.6 KB a launch: 100k launches are 360 MB) with fresh launch
IDs; --source another page. Median of --repeat fresh processes, the two taking turns; peak RSS by
GNU time.

    python benchmarks/bench_details.py [--sizes 10000 100000] [--repeat 3]
    # the same for another version:
    PYTHONPATH=/path/to/other/checkout/shim python benchmarks/bench_details.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from bench_outputs import median_runs

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"
SOURCE = FIXTURES / "a100_gemm_printfp_details.csv"


def build(n: int, out: Path, source: Path = SOURCE) -> None:
    """`n` launches: the source's launches in turn, each row's ID cell replaced by the new
    launch's."""
    lines = source.read_bytes().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(b'"ID"'))
    rows: dict[bytes, list[bytes]] = defaultdict(list)
    for line in lines[start + 1 :]:
        if line.startswith(b'"'):
            launch, rest = line.split(b",", 1)
            rows[launch].append(rest)
    launches = list(rows.values())
    with out.open("wb") as handle:
        handle.write(lines[start])
        for i in range(n):
            handle.writelines(b'"%d",%s' % (i, rest) for rest in launches[i % len(launches)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, default=SOURCE)
    args = parser.parse_args()
    env = {**os.environ, "COLUMNS": "160", "FLOPSCOPE_NO_CACHE": "1"}
    env.pop("PYTHONUNBUFFERED", None)
    print(f"{'launches':>9} {'MB':>6} {'command':<28} {'s':>7} {'x read':>7} {'RSS MB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        env["FLOPSCOPE_HOME"] = tmp
        for n in args.sizes:
            path = Path(tmp) / f"details_{n}.csv"
            build(n, path, args.source)
            size = path.stat().st_size / 1e6
            bare = [
                sys.executable,
                "-c",
                f"import pandas; pandas.read_csv({str(path)!r}, low_memory=False)",
            ]
            argv = [sys.executable, "-m", "flopscope.tui.cli", "report", str(path), "--no-cache"]
            (base_s, base_rss), (s, rss) = median_runs([(bare, env), (argv, env)], args.repeat)
            print(
                f"{n:>9} {size:>6.0f} {'pandas.read_csv':<28} {base_s:>7.2f} {1:>7.2f}"
                f" {base_rss:>7.0f}",
                flush=True,
            )
            print(
                f"{n:>9} {size:>6.0f} {'report':<28} {s:>7.2f} {s / base_s:>7.2f} {rss:>7.0f}",
                flush=True,
            )
            path.unlink()


if __name__ == "__main__":
    main()
