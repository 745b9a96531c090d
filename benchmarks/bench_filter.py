"""How long one keystroke of the live table filter takes at 100k rows (issue 43.1: <= 100 ms).

    python benchmarks/bench_filter.py [--launches 100000] [--runs 5]

A synthetic Report repeats the launches of the bundled demo (read once, every column real) up to
--launches; the table is its per-launch view (`TableModel` over `Report.group("launch",
time_order=False)`, as the app's `g` shows it). Each keystroke of each filter below is timed as the
prompt's live step runs it (`TableScreen.action_filter.live`): the problem check (parse, and a trial
mask over the rows), then the parse and `TableModel.apply` (mask and order). The table's repaint (a
frame: < 17 ms, the rows on screen only) is not in it; bench_tui.py times filter-to-frame. Medians
of --runs; the table printed is markdown."""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from flopscope.core import Report, read_report
from flopscope.tui.presentation.columns import table_columns
from flopscope.tui.presentation.table_model import Query, TableModel, filter_problem, parse_filter

DEMO = (
    Path(__file__).resolve().parents[1]
    / "tui"
    / "examples"
    / "train_transformer_bf16_bs8.ncu-rep.xz"
)
FILTERS = [
    "nvjet",  # a name pattern, as before
    "time > 5us",
    "time > 5us and bound == dram",
    "bound == dram and pct_time > 1% and %Roof < 20",  # issue 43's "done when" question
    "prec ~ tc or (dram_bytes >= 1MB and not kernel ~ elementwise)",
]


def synthetic(report: Report, launches: int) -> Report:
    """`launches` rows repeating the report's launches, with fresh launch ids (as bench_tui.py makes
    them)."""
    base = report.kernels
    reps = -(-launches // len(base))
    kernels = base.iloc[np.tile(np.arange(len(base)), reps)[:launches]].reset_index(drop=True)
    kernels["launch_id"] = np.arange(launches)
    return Report(
        meta=replace(report.meta, launches=launches),
        kernels=kernels,
        gpu=report.gpu,
        missing=report.missing,
    )


def keystroke(model: TableModel, text: str) -> float:
    """Seconds the live step takes for `text` as typed so far."""
    start = time.perf_counter()
    if filter_problem(text, Query(), model=model) is None:
        model.apply(parse_filter(text, Query(), model.names))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    report = synthetic(read_report(DEMO), args.launches)
    rows = report.group("launch", time_order=False)
    print(
        f"{args.launches:,} launches, per-launch table of {len(rows.columns)} columns; medians of"
        f" {args.runs} runs"
    )
    print()
    print("| filter | keys | median per key | slowest key | rows kept |")
    print("|---|---:|---:|---:|---:|")
    for text in FILTERS:
        per_key: list[float] = []
        slowest = 0.0
        for _ in range(args.runs):
            # fresh: no column's distinct values known yet
            model = TableModel(rows, table_columns("launch"))
            times = [keystroke(model, text[:n]) for n in range(1, len(text) + 1)]
            per_key.append(statistics.median(times))
            slowest = max(slowest, statistics.median(sorted(times)[-3:]))
        kept = len(model)
        print(
            f"| `{text}` | {len(text)} | {1e3 * statistics.median(per_key):.1f} ms |"
            f" {1e3 * slowest:.1f} ms | {kept:,} |"
        )


if __name__ == "__main__":
    main()
