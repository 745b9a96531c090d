"""How long the module tree and the NVTX stack columns take at 100k and 1M launches (issue 40.2).

    python benchmarks/bench_module_tree.py [--launches 100000 1000000] [--runs 3]

A synthetic kernels table repeats the launches of the bundled demo (a training step: 91 launches,
emit_nvtx ranges nested up to 8 deep; read once, every column real) up to each size. Timed:
`stack_columns` (the readers' NVTX stacks into the categorical `nvtx_stack` and the joined `nvtx`
labels, as `count_kernels` makes them), `module_tree` on one GPU, and `module_tree` with the
launches alternating between two GPUs (a GPU level under the root). Medians of --runs; the table
printed is markdown."""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from flopscope.core import read_report
from flopscope.core.table.module_tree import module_tree
from flopscope.core.table.nvtx import stack_columns

DEMO = (
    Path(__file__).resolve().parents[1]
    / "tui"
    / "examples"
    / "train_transformer_bf16_bs8.ncu-rep.xz"
)


def _median(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    report = read_report(DEMO)
    gpus = {"NVIDIA H100 80GB HBM3": report.judged_by}
    print(
        "| launches | stack_columns | module_tree, 1 GPU | module_tree, 2 GPUs | nodes (2 GPUs) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n in args.launches:
        at = np.tile(np.arange(len(report.kernels)), -(-n // len(report.kernels)))[:n]
        kernels = report.kernels.iloc[at].reset_index(drop=True)
        stacks = pd.Series(np.asarray(kernels["nvtx_stack"].astype(object)), dtype=object)
        two = kernels.copy()
        two["gpu"] = np.where(np.arange(n) % 2, "NVIDIA H100 PCIe", str(kernels["gpu"].iloc[0]))
        judged = {**gpus, "NVIDIA H100 PCIe": report.judged_by}
        t_stack = _median(args.runs, partial(stack_columns, stacks))
        t_one = _median(args.runs, partial(module_tree, kernels, report.judged_by))
        t_two = _median(args.runs, partial(module_tree, two, judged))
        nodes = len(module_tree(two, judged))
        print(f"| {n:,} | {t_stack:.3f} s | {t_one:.3f} s | {t_two:.3f} s | {nodes} |")


if __name__ == "__main__":
    main()
