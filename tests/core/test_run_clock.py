"""Issue 41.2: one clock per GPU for a run's ceilings. The demo's header named three clocks
(1.81/1.94/1.97 GHz): its FP32 ceiling came from the report's peak counters at the launches'
time-weighted clock, its TC BF16 ceiling from the datasheet at their median clock. Now every FLOP
ceiling of a run that is taken at a measured clock is taken at one: the launches' SM clock weighted
by their time, read here with NVIDIA's ncu_report, not the engine."""

from __future__ import annotations

import csv
import math
import re

import pytest
from flopscope.core.table import CLOCKS

from ..helpers.accounting import counter, report_actions
from ..helpers.cli import run_cli
from ..helpers.real_files import ROOT, file_id, plain_copy, real_files, report_of

REPORTS = [p for p in real_files() if ".ncu-rep" in p.name]


def raw_clock(path, tmp_path) -> float:
    """sum(clock x time) / sum(time) over the launches that have both, from the report's own
    metrics."""
    plain = plain_copy(path, tmp_path)
    pairs = [(clock_of(a), counter(a, "gpu__time_duration.sum")) for a in report_actions(plain)]
    # a launch ncu did not profile: NaN
    pairs = [(c, t) for c, t in pairs if c and t and math.isfinite(c * t)]
    return sum(c * t for c, t in pairs) / sum(t for _, t in pairs) if pairs else float("nan")


def clock_of(action) -> float | None:
    """The launch's SM clock: ncu's rate where collected, else its elapsed cycles over its time
    (basic sets)."""
    for name in ("smsp__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second"):
        if counter(action, name):
            return counter(action, name)
    cycles, ns = (
        counter(action, "sm__cycles_elapsed.avg"),
        counter(action, "gpu__time_duration.sum"),
    )
    return cycles / (ns * 1e-9) if cycles and ns else None


def datasheet_rows() -> dict[str, dict[str, str]]:
    with open(ROOT / "core" / "data" / "gpus.csv", newline="", encoding="utf-8") as handle:
        return {row["key"]: row for row in csv.DictReader(handle)}


@pytest.mark.parametrize("path", REPORTS, ids=file_id)
def test_the_runs_flop_ceilings_are_at_one_clock_the_launches_time_weighted(path, tmp_path):
    report = report_of(path)
    flop = [c for c in report.ceilings() if not c.bandwidth]
    assert all(c.clock in CLOCKS for c in flop) and all(
        c.clock == "" for c in report.ceilings() if c.bandwidth
    )
    clocks = {c.sm_clock_hz for c in flop if c.clock == "run"}
    if not clocks:
        pytest.skip(
            f"{path.name}: no SM clock in the report, so its ceilings are the datasheet's as quoted"
        )
    (clock,) = clocks  # one clock, not one per source
    assert clock == pytest.approx(raw_clock(path, tmp_path), rel=1e-9)
    gpu = report.gpu
    for c in flop:
        # NVIDIA's figure, scaled from its clock to the run's
        if "datasheet" in c.source and gpu is not None:
            row = datasheet_rows()[gpu.key]
            column = (
                c.name.removeprefix("tensor_")
                + ("_tensor" if c.name.startswith("tensor_") else "")
                + "_tflops"
            )
            # Hopper's TF32/FP16/BF16/FP8 tensor peaks are quoted at its lower tensor clock; FP64
            # tensor at boost.
            tensor_clock = (
                c.name.startswith("tensor_") and c.name != "tensor_fp64" and row["tensor_clock_mhz"]
            )
            quoted_at = float(row["tensor_clock_mhz"] if tensor_clock else row["boost_clock_mhz"])
            assert c.value == pytest.approx(
                float(row[column]) * 1e12 * clock / (quoted_at * 1e6), rel=1e-9
            )


def test_the_header_names_one_clock():
    """The demo's header: one `SM ... GHz` for all its ceilings (it named 1.94 and a median 1.97
    before)."""
    demo = ROOT / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"
    out = run_cli("report", str(demo), "--top", "1")
    header = out.stdout.split("\nKernel time")[0]
    assert out.returncode == 0 and len(re.findall(r"SM [\d.]+ [GM]Hz", header)) == 1, header
    assert "median" not in header
