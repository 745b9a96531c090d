"""Engine speed and memory: parse + derive a raw-page CSV of 100k and 1M launches; .ncu-rep
kernels/s.

The CSV repeats the real launches of
../shared/fixtures/ncu/v100_cutlass_gemm_nersc_flops_details.csv, written as `ncu --csv --page raw
--print-units base` would. Each measurement runs in a fresh process so its peak RSS is its own.
Targets (issue 2, 2-core machine): 100k <= 1.5 s; 1M <= 15 s within 1.5 GB.

    python benchmarks/bench_engine.py [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import csv
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"
SOURCE = FIXTURES / "v100_cutlass_gemm_nersc_flops_details.csv"
NCU_REPS = [
    "a100pcie40_cub_radixsort_154k_basic.ncu-rep",
    "h100pcie_ee384_cub_agents_full.ncu-rep",
    "a10_spyinfer_linear_105k_basic.ncu-rep",
]
IDENT = [
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
]


def build_raw_csv(n: int, out: Path) -> None:
    from flopscope.core.readers import read_metrics

    frame, _ = read_metrics(SOURCE)
    metrics = [c for c in frame.columns if "__" in c]
    frame["gpu__time_duration.sum"] = (
        frame["sm__cycles_elapsed.avg"] / frame["sm__cycles_elapsed.avg.per_second"]
    )
    metrics.append("gpu__time_duration.sum")
    units = ["nsecond" if m.startswith("gpu__time") else "" for m in metrics]
    rows = []
    for _, r in frame.iterrows():
        ident = [
            "",
            "24103",
            "self_gemm",
            "127.0.0.1",
            r["kernel_full"],
            "1",
            r["stream"],
            r["block"],
            r["grid"],
            r["device"],
            r["cc"],
        ]
        vals = [f"{r[m] * (1e9 if m.startswith('gpu__time') else 1):.0f}" for m in metrics]
        rows.append((ident, vals))
    with out.open("w", newline="") as handle:
        w = csv.writer(handle, quoting=csv.QUOTE_ALL)
        w.writerow(IDENT + metrics)
        w.writerow([""] * len(IDENT) + units)
        for i in range(n):
            ident, vals = rows[i % len(rows)]
            w.writerow([str(i), *ident[1:], *vals])


def one(path: str) -> None:
    """Child process: time read_report + grouping, print seconds and peak RSS."""
    from flopscope.core import read_report

    start = time.perf_counter()
    report = read_report(path)
    parsed = time.perf_counter() - start
    report.group("name")
    grouped = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(report.kernels)} {parsed:.3f} {grouped:.3f} {rss:.0f}")


def ncu_rep_rate() -> list[tuple[str, int, float]]:
    from flopscope.core import read_report

    out = []
    for name in NCU_REPS:
        path = FIXTURES / name
        start = time.perf_counter()
        n = len(read_report(path).kernels)
        out.append((name, n, n / (time.perf_counter() - start)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--one")
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    print(
        f"{'launches':>10} {'CSV MB':>8} {'parse+derive s':>15} {'+group s':>9} {'peak RSS MB':>12}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"raw_{n}.csv"
            build_raw_csv(n, path)
            res = subprocess.run(
                [sys.executable, __file__, "--one", str(path)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            print(
                f"{int(res[0]):>10} {path.stat().st_size / 1e6:>8.1f} {float(res[1]):>15.2f}"
                f" {float(res[2]):>9.2f} {float(res[3]):>12.0f}"
            )
    print()
    print(f"{'.ncu-rep':<46} {'launches':>8} {'launches/s':>11}")
    for name, n, rate in ncu_rep_rate():
        print(f"{name:<46} {n:>8} {rate:>11.0f}")


if __name__ == "__main__":
    main()
