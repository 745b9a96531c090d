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
where there is another.

On a file whose launches ran on several GPUs (distinct device and name, as the module tree's GPU
level tells them apart), each GPU's steps are its own: its launches' kernel time and FLOPs, against
its own ceilings, beside the one wall time the timing run measured for the step."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..report.report import Report
from ..store.step_times import StepTimes
from ..table.module_tree import NODE_SEP, gpu_levels, placements
from ..table.nvtx import stacks_of
from ..table.roofline import PRECISIONS

# (picking filters, cutting filters) of a profile: core/store/ncu_filters.py
Filters = tuple[list[str], list[str]]


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
    gpu: str = ""  # `GPU 0: NVIDIA H100 ...` on a file of several GPUs, else ""
    launches: int = 0  # profiled launches under the step's range
    # why ncu profiled only part of the step's launches ("": all of them, as far as is known)
    partial: str = ""

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
    steps: list[StepFigures]  # GPU by GPU (in the module tree's order), each GPU's by step
    median: StepFigures | None  # over median_of; None on a file of several GPUs (see medians)
    median_of: list[int]  # the steps with both times, the first left out where there are others
    # precision -> (FLOP/s, where from): the first GPU's
    peaks: dict[str, tuple[float, str]] = field(default_factory=dict)
    timing_file: str = ""
    medians: list[StepFigures] = field(default_factory=list)  # one per GPU
    # GPU label -> its peaks, on a file of several GPUs
    peaks_by_gpu: dict[str, dict[str, tuple[float, str]]] = field(default_factory=dict)

    @property
    def median_wall_s(self) -> float:
        """The median step's wall time (every GPU's: the timing run measured the program's)."""
        return self.medians[0].wall_s if self.medians else math.nan


def step_mfu(
    report: Report, times: StepTimes | None, filters: Filters | None = None
) -> StepMfu | None:
    """Each step's figures, per GPU on a file of several (None when no launch ran under a `step N`
    range and there are no step times). `filters`: ncu's picking and cutting launch filters the
    profile ran with (core/store/ncu_filters.py), which say which steps it profiled only in
    part."""
    kernels = report.kernels
    codes, placed = placements(stacks_of(kernels))
    step_of = np.array([np.nan if p.step is None else p.step for p in placed], dtype=float)[codes]
    walls = times.wall_s if times else {}
    numbers = sorted(set(step_of[~np.isnan(step_of)].astype(int).tolist()) | set(walls))
    if not numbers:
        return None
    timing_file = str(times.path) if times else ""
    parts = _gpu_parts(report)
    if parts is None:
        steps = _flag_partial(_steps(kernels, step_of, numbers, walls, _peaks(report), ""), filters)
        chosen = _median_steps(steps)
        median = _median(steps, chosen)
        return StepMfu(
            steps, median, chosen, _peaks(report), timing_file, [median] if median else []
        )
    rows: list[StepFigures] = []
    medians: list[StepFigures] = []
    peaks_by_gpu: dict[str, dict[str, tuple[float, str]]] = {}
    median_of: list[int] = []
    for label, mask, peaks in parts:
        steps = _steps(kernels[mask], step_of[mask], numbers, walls, peaks, label)
        steps = _flag_partial(steps, filters)
        median_of = median_of or _median_steps(steps)
        gpu_median = _median(steps, _median_steps(steps))
        rows += steps
        medians += [gpu_median] if gpu_median else []
        peaks_by_gpu[label] = peaks
    first = next(iter(peaks_by_gpu.values()), {})
    return StepMfu(rows, None, median_of, first, timing_file, medians, peaks_by_gpu)


def _gpu_parts(
    report: Report,
) -> list[tuple[str, np.ndarray, dict[str, tuple[float, str]]]] | None:
    """(label, its launches, its ceilings) per GPU on a file of several (the module tree's levels:
    distinct device and name); None on a file of one."""
    levels = gpu_levels(report.kernels)
    if levels is None:
        return None
    codes, labels = levels
    names = report.kernels["gpu"].astype(object).to_numpy() if "gpu" in report.kernels else None
    out = []
    for n, label in enumerate(labels):
        mask = codes == n
        name = str(names[mask][0]) if names is not None and mask.any() else ""
        out.append((label, mask, _peaks(report, name)))
    return out


def _steps(
    kernels: pd.DataFrame,
    step_of: np.ndarray,
    numbers: list[int],
    walls: dict[int, float],
    peaks: dict[str, tuple[float, str]],
    gpu: str,
) -> list[StepFigures]:
    """The figures of each step in `numbers` over these launches (`step_of`: each one's step, NaN
    outside every step)."""
    in_step = kernels[~np.isnan(step_of)]
    keys = step_of[~np.isnan(step_of)].astype(int)
    kernel_s = in_step["duration_s"].groupby(keys).sum(min_count=1)
    launches = in_step["duration_s"].groupby(keys).size()
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
                gpu,
                int(launches.get(n, 0)),
            )
        )
    return steps


# A step with fewer than this share of the fullest step's launches is cut, with no filter known.
_WHOLE = 0.9


def _flag_partial(steps: list[StepFigures], filters: Filters | None) -> list[StepFigures]:
    """The steps ncu profiled only in part, flagged: every step where the profile picked kernels
    (`-k`); else a step with fewer launches than the fullest one where the profile cut its launches
    (`-c`, `--launch-skip`), or, with no such option known, under 90% of them (a step may launch a
    kernel more or less than another: a data-dependent one) where the timing run timed it whole or
    it is not the last. The last step without a wall time is the program's tail after its last
    optimizer step, not a cut one.
    Their kernel time and FLOPs are the profiled part (lower bounds), their idle share an upper
    bound."""
    picking, cutting = filters or ([], [])
    most = max((s.launches for s in steps), default=0)
    last = max((s.step for s in steps if s.launches and s.step is not None), default=None)
    out = []
    for s in steps:
        reason = ""
        if s.launches and picking:
            reason = f"ncu profiled only the launches {', '.join(picking)} picks"
        elif 0 < s.launches < most and (
            cutting or (s.launches < _WHOLE * most and (s.step != last or not math.isnan(s.wall_s)))
        ):
            how = f" (ncu ran with {', '.join(cutting)})" if cutting else ""
            reason = f"{s.launches} launches profiled, the fullest step has {most}{how}"
        out.append(
            replace(s, partial=reason, time_partial=True, flop_partial=True) if reason else s
        )
    return out


def median_wall(times: StepTimes) -> tuple[float, list[int]] | None:
    """The timing run's median step wall time and the steps it is over (step 1, the warm-up, left
    out where there are others); None without a whole step."""
    steps = list(times.wall_s)
    chosen = steps[1:] if len(steps) > 1 and steps[0] == 1 else steps
    return (float(statistics.median(times.wall_s[n] for n in chosen)), chosen) if chosen else None


def with_node_mfu(tree: pd.DataFrame, s: StepMfu, steps: int) -> pd.DataFrame:
    """The module tree with each node's MFU: `mfu_kernel`, its FLOPs' time at peak over its kernel
    time, and `mfu_wall`, that time per step (the report holding `steps`) over the median step's
    wall time: the node's part of the step's MFU (children add up to at most their parent's). On a
    file of several GPUs a node is judged by the peaks of the GPU it sits under, the root by the sum
    of its GPUs'."""
    gpus = [str(p).split(NODE_SEP, 1)[0] for p in tree["path"]]
    at_peak = pd.Series(
        [
            _time_at_peak(row, s.peaks_by_gpu.get(g, s.peaks))
            for row, g in zip(tree.to_dict(orient="records"), gpus, strict=True)
        ],
        index=tree.index,
        dtype=float,
    )
    if s.peaks_by_gpu:  # the root spans the GPUs: its time at peak is theirs added
        top = tree["depth"] == 1
        at_peak = at_peak.mask(tree["depth"] == 0, at_peak[top].sum(min_count=1))
    out = tree.copy()
    out["mfu_kernel"] = at_peak / tree["duration_s"].where(tree["duration_s"] > 0)
    wall = s.median_wall_s
    out["mfu_wall"] = at_peak / steps / wall if wall and not math.isnan(wall) else math.nan
    return out


def _time_at_peak(node: dict[str, object], peaks: dict[str, tuple[float, str]]) -> float:
    """Σ FLOPs_p / peak_p of one tree node; NaN where its FLOPs are unknown or a precision it ran
    has no peak."""
    if pd.isna(node.get("flop")):
        return math.nan
    total = 0.0
    for name, col, _ in PRECISIONS:
        flop = node.get(col)
        if isinstance(flop, float) and flop > 0:
            total += flop / peaks[name][0] if name in peaks else math.nan
    return total


def _peaks(report: Report, gpu: str | None = None) -> dict[str, tuple[float, str]]:
    """Each precision's FLOP ceiling the run is judged against: the device `gpu`'s (None: the first
    GPU's, where it ran on several)."""
    out: dict[str, tuple[float, str]] = {}
    for ceiling in report.ceilings():
        if gpu is not None and ceiling.gpu and ceiling.gpu != gpu:
            continue
        if not ceiling.bandwidth and ceiling.name not in out and ceiling.value > 0:
            out[ceiling.name] = (ceiling.value, ceiling.source)
    return out


def _at_peak(flop: dict[str, float], peaks: dict[str, tuple[float, str]]) -> float:
    if not flop or any(name not in peaks for name in flop):
        return math.nan
    return sum(f / peaks[name][0] for name, f in flop.items())


def _median_steps(steps: list[StepFigures]) -> list[int]:
    """The steps with both times and all their launches profiled, the first (the warm-up) left
    out where there are others."""
    both = [
        s.step
        for s in steps
        if s.step is not None
        and not math.isnan(s.wall_s)
        and not math.isnan(s.kernel_s)
        and not s.partial
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
        rows[0].gpu,
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
        **({"gpu": s.gpu} if s.gpu else {}),
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
        "launches": s.launches,
        # why ncu profiled only part of the step (null: all of it, as far as is known)
        "partial_profile": s.partial or None,
    }
