"""MFU and GPU idle time per training step: the timing run's wall time of each step (no ncu) beside
the kernel time and FLOPs ncu measured under that step's `step N` range (profile --modules).

- kernel time: the summed durations of the step's profiled launches, as ncu measured them, one
  launch at a time (replayed, serialised: launches that overlapped in the program count in full
  here);
- idle share: (wall - kernel time) / wall, the GPU waiting on launch overhead, host work and data
  loading;
- MFU: the step's FLOPs over (time x peak), each precision's FLOPs against its own peak (the run's
  ceilings, as `report` judges the run), so Σ FLOPs_p / peak_p is the time the step's work needs at
  peak; over the wall time (what the program got) and over the kernel time (what its kernels got).

The first step warms up (allocator, cuDNN autotuning, compilation), so the median leaves it out
where there is another."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..report.report import Report
from ..store.step_times import StepTimes
from ..table.module_tree import placements
from ..table.nvtx import stacks_of
from ..table.roofline import PRECISIONS


@dataclass(frozen=True)
class StepFigures:
    step: int | None  # None: the median row
    wall_s: float  # NaN where the timing run has no such step
    kernel_s: float  # NaN where ncu profiled no launch under it
    flop: dict[str, float]  # per precision (ceiling name) with FLOPs
    at_peak_s: float  # Σ FLOPs_p / peak_p: NaN where a precision with FLOPs has no peak
    # Some launch's total FLOPs (or time) unknown: FLOPs, at_peak_s (or kernel_s) are the known
    # part, a lower bound
    flop_partial: bool = False
    time_partial: bool = False

    @property
    def flop_total(self) -> float:
        return sum(self.flop.values()) if self.flop else math.nan

    @property
    def idle_share(self) -> float:
        return _ratio(self.wall_s - self.kernel_s, self.wall_s)

    @property
    def mfu_wall(self) -> float:
        return _ratio(self.at_peak_s, self.wall_s)

    @property
    def mfu_kernel(self) -> float:
        return _ratio(self.at_peak_s, self.kernel_s)


@dataclass(frozen=True)
class StepMfu:
    steps: list[StepFigures]
    median: StepFigures | None  # over median_of
    median_of: list[int]  # the steps with both times, the first left out where there are others
    # precision -> (FLOP/s, where from)
    peaks: dict[str, tuple[float, str]] = field(default_factory=dict)
    timing_file: str = ""


def step_mfu(report: Report, times: StepTimes | None) -> StepMfu | None:
    """Each step's figures (None when no launch ran under a `step N` range and there are no step
    times)."""
    kernels = report.kernels
    codes, placed = placements(stacks_of(kernels))
    step_of = np.array([np.nan if p.step is None else p.step for p in placed], dtype=float)[codes]
    in_step = kernels[~np.isnan(step_of)]
    keys = step_of[~np.isnan(step_of)].astype(int)
    walls = times.wall_s if times else {}
    numbers = sorted(set(keys.tolist()) | set(walls))
    if not numbers:
        return None
    peaks = _peaks(report)
    kernel_s = in_step["duration_s"].groupby(keys).sum(min_count=1)
    flop_partial = in_step["flop"].isna().groupby(keys).any()
    time_partial = in_step["duration_s"].isna().groupby(keys).any()
    flops = {
        name: in_step[col].groupby(keys).sum(min_count=1)
        for name, col, _ in PRECISIONS
        if col in in_step
    }
    steps = []
    for n in numbers:
        flop = {name: float(f[n]) for name, f in flops.items() if n in f.index and f[n] > 0}
        steps.append(
            StepFigures(
                n,
                walls.get(n, math.nan),
                float(kernel_s.get(n, math.nan)),
                flop,
                _at_peak(flop, peaks),
                bool(flop_partial.get(n, False)),
                bool(time_partial.get(n, False)),
            )
        )
    median_of = _median_steps(steps)
    return StepMfu(
        steps, _median(steps, median_of), median_of, peaks, str(times.path) if times else ""
    )


def median_wall(times: StepTimes) -> tuple[float, list[int]] | None:
    """The timing run's median step wall time and the steps it is over (step 1, the warm-up, left
    out where there are others); None without a whole step."""
    steps = list(times.wall_s)
    chosen = steps[1:] if len(steps) > 1 and steps[0] == 1 else steps
    return (float(statistics.median(times.wall_s[n] for n in chosen)), chosen) if chosen else None


def with_node_mfu(tree: pd.DataFrame, s: StepMfu, steps: int) -> pd.DataFrame:
    """The module tree with each node's MFU: `mfu_kernel`, its FLOPs' time at peak over its kernel
    time, and `mfu_wall`, that time per step (the report holding `steps`) over the median step's
    wall time: the node's part of the step's MFU (children add up to at most their parent's)."""
    at_peak = pd.Series(0.0, index=tree.index)
    for name, col, _ in PRECISIONS:
        if col not in tree:
            continue
        flop = tree[col].astype(float).fillna(0.0)
        peak = s.peaks[name][0] if name in s.peaks else math.nan
        at_peak = at_peak + (flop / peak).where(flop > 0, 0.0)
    at_peak = at_peak.where(tree["flop"].notna())
    out = tree.copy()
    out["mfu_kernel"] = at_peak / tree["duration_s"].where(tree["duration_s"] > 0)
    wall = s.median.wall_s if s.median else math.nan
    out["mfu_wall"] = at_peak / steps / wall if wall and not math.isnan(wall) else math.nan
    return out


def _peaks(report: Report) -> dict[str, tuple[float, str]]:
    """Each precision's FLOP ceiling the run is judged against (the first GPU's, where it ran on
    several)."""
    out: dict[str, tuple[float, str]] = {}
    for ceiling in report.ceilings():
        if not ceiling.bandwidth and ceiling.name not in out and ceiling.value > 0:
            out[ceiling.name] = (ceiling.value, ceiling.source)
    return out


def _at_peak(flop: dict[str, float], peaks: dict[str, tuple[float, str]]) -> float:
    if not flop or any(name not in peaks for name in flop):
        return math.nan
    return sum(f / peaks[name][0] for name, f in flop.items())


def _median_steps(steps: list[StepFigures]) -> list[int]:
    both = [
        s.step
        for s in steps
        if s.step is not None and not math.isnan(s.wall_s) and not math.isnan(s.kernel_s)
    ]
    return both[1:] if len(both) > 1 and both[0] == 1 else both


def _median(steps: list[StepFigures], chosen: list[int]) -> StepFigures | None:
    """The median step: the median of each of wall time, kernel time, FLOPs and time at peak over
    the chosen steps; its idle share and MFU follow from those (a ratio of medians)."""
    rows = [s for s in steps if s.step in chosen]
    if not rows:
        return None
    names = sorted({name for s in rows for name in s.flop})
    return StepFigures(
        None,
        _median_of([s.wall_s for s in rows]),
        _median_of([s.kernel_s for s in rows]),
        {name: _median_of([s.flop.get(name, 0.0) for s in rows]) for name in names},
        _median_of([s.at_peak_s for s in rows]),
        any(s.flop_partial for s in rows),
        any(s.time_partial for s in rows),
    )


def _median_of(values: list[float]) -> float:
    return math.nan if any(math.isnan(v) for v in values) else float(statistics.median(values))


def _ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def figures_json(s: StepFigures) -> dict[str, object]:
    """One step's figures as JSON values (NaN as None)."""

    def num(x: float) -> float | None:
        return None if isinstance(x, float) and math.isnan(x) else x

    return {
        **({"step": s.step} if s.step is not None else {}),
        "wall_s": num(s.wall_s),
        "kernel_s": num(s.kernel_s),
        "idle_s": num(s.wall_s - s.kernel_s),
        "idle_share": num(s.idle_share),
        "flop": num(s.flop_total),
        "flop_by_precision": s.flop,
        "mfu_wall": num(s.mfu_wall),
        "mfu_kernel": num(s.mfu_kernel),
        # FLOPs and MFU count only the launches whose FLOPs are known
        "flop_lower_bound": s.flop_partial,
        "kernel_time_lower_bound": s.time_partial,  # a launch without a time (not profiled)
    }
