"""Launches measured above their own ceiling: physically impossible, so the ceiling that judged them
(a wrong --gpu, a datasheet peak quoted at another clock than the card ran at, a precision without a
peak of its own) or their FLOP or byte count is wrong. One finding per kind (FLOP, DRAM) naming the
worst launch, for every view that shows a report's warnings (the CLI's stderr, `--json`/export meta,
the app's summary)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..common.gpus import Gpu, all_gpus, find_gpu, same_cc
from ..common.si_format import si
from ..common.units import is_missing
from ..ncu.metrics import PEAKS, PRECISION_LETTER, TIME
from ..table.counters import Missing
from .meta import ReportMeta

# How far above its ceiling a launch may measure before it is flagged. Both sides of the ratio carry
# rounding that is no error: the ceiling is a peak per cycle x the SM clock ncu averaged over the
# launch (or a datasheet peak quoted to 3 digits, 61.7 TFLOP/s, scaled by that clock), the DRAM
# ceiling takes the report's average memory clock (counters._dram_clock; a short launch's own
# reading, up to 11% higher, bounds it too), and the rate divides by gpu__time_duration, timed apart
# from the counters. What is left is a few tenths of a percent at most; 1% is beyond them all, while
# a wrong GPU or a miscounted FLOP is off by far more (an RTX 5090 GEMM judged by an RTX 5070's
# datasheet: 231%).
TOLERANCE = 0.01
# The measured SM clock, which a datasheet peak is scaled to (the profile command collects it with
# the time).
_CLOCK = next(m for m in TIME if m.startswith("smsp__cycles_elapsed") and m.endswith(".per_second"))
_DRAM_PEAKS = [m for m in PEAKS if m.startswith("dram__")]
_LOWER = re.compile(r"leaves out|tensor work only")  # counters.py's notes of FLOPs not counted


@dataclass(frozen=True)
class OverCeiling:
    """The launches of one kind (FLOP or DRAM) measured above their ceiling, and the worst of
    them."""

    kind: str  # "FLOP" or "DRAM"
    launches: int  # launches more than TOLERANCE above their ceiling
    kernel: str  # the worst one's short name (highest measured / ceiling)
    launch_id: int | None
    gpu: str  # its device, in a file of launches on several GPUs; "" otherwise
    measured: float  # its FLOP/s or DRAM B/s
    ceiling: float  # the ceiling that judged it, in the same unit
    precision: str  # which ceiling: `tensor_bf16`, `fp64+fp32`, `dram`
    source: str  # where that ceiling came from
    fix: str  # what to check, and the ncu option that takes the ceiling from the GPU itself
    # the first thing to check, in a few words (`check --gpu rtx5070`): the app's summary line
    check: str

    @property
    def pct(self) -> float:
        return 100.0 * self.measured / self.ceiling

    def problem(self) -> str:
        unit = "FLOP/s" if self.kind == "FLOP" else "B/s"
        many = self.launches > 1
        where = f"launch {self.launch_id}" + (f" on {self.gpu}" if self.gpu else "")
        which = f"{self.precision} ceiling" if self.kind == "FLOP" else "ceiling"
        return (
            f"{self.launches} launch{'es' if many else ''} measured above"
            f" {'their' if many else 'its'} {self.kind} ceiling, which no kernel can do:"
            f" {'worst ' if many else ''}{self.kernel} ({where}) at {si(self.measured, unit)},"
            f" {self.pct:.1f}% of its {which} {si(self.ceiling, unit)} ({self.source})"
        )

    def as_dict(self) -> dict[str, Any]:
        """For `--json` and export meta: the numbers in SI units, and the line's two halves as
        text."""
        return {**asdict(self), "pct_of_ceiling": self.pct, "problem": self.problem()}


@dataclass(frozen=True)
class _Judge:
    """The database GPU whose datasheet judges a launch, and whether `--gpu` chose it."""

    gpu: Gpu | None
    by_option: bool
    cc: object


def over_ceiling(kernels: pd.DataFrame, meta: ReportMeta) -> list[OverCeiling]:
    """Per kind, the launches (not groups: a group's rate is at most its fastest launch's) measured
    more than TOLERANCE above their own ceiling; an empty list when none is."""
    found = []
    for kind, measured, ceiling in (
        ("FLOP", "flop_per_s", "peak_flop_per_s"),
        ("DRAM", "dram_bytes_per_s", "peak_dram_bytes_per_s"),
    ):
        if measured not in kernels or ceiling not in kernels:
            continue
        limit = kernels[ceiling].astype(float)
        if kind == "DRAM" and "report_peak_dram_own_bytes_per_s" in kernels:
            # A short launch reads its own DRAM clock noisily, above the report-wide one the ceiling
            # takes (H100 4-7 us launches: up to 11%): over the ceiling only if over the peak at its
            # own reading too.
            limit = np.fmax(limit, kernels["report_peak_dram_own_bytes_per_s"].astype(float))
        ratio = kernels[measured].astype(float) / limit.where(limit > 0)
        over = ratio > 1 + TOLERANCE  # NaN (no ceiling, no rate) is never over
        if over.any():
            row = kernels.loc[ratio.where(over).idxmax()]
            found.append(_finding(kind, row, int(over.sum()), meta))
    return found


def _finding(kind: str, row: pd.Series, launches: int, meta: ReportMeta) -> OverCeiling:
    judge = _judge(meta, row.get("gpu"))
    several = len(meta.gpus) > 1
    flop = kind == "FLOP"
    launch_id = row.get("launch_id")
    fix, check = _flop_fix(row, judge) if flop else _dram_fix(row, judge)
    return OverCeiling(
        kind=kind,
        launches=launches,
        kernel=str(row.get("kernel")),
        launch_id=None if is_missing(launch_id) else int(launch_id),
        gpu=str(row.get("gpu")) if several else "",
        measured=float(row["flop_per_s" if flop else "dram_bytes_per_s"]),
        ceiling=float(row["peak_flop_per_s" if flop else "peak_dram_bytes_per_s"]),
        precision=str(row.get("precision")) if flop else "dram",
        source=_flop_source(row, judge) if flop else _dram_source(row, judge),
        fix=fix,
        check=check,
    )


def _judge(meta: ReportMeta, device: object) -> _Judge:
    """Whose datasheet judges a launch on `device`: in a file of several GPUs its device's entry of
    meta.gpus, else the run's (read_report and with_gpu record both)."""
    for g in meta.gpus if len(meta.gpus) > 1 else ():
        if g.name == device:
            return _Judge(find_gpu(g.database_key), g.gpu_source == "--gpu", g.compute_capability)
    return _Judge(
        find_gpu(meta.gpu_database_key), meta.gpu_source == "--gpu", meta.compute_capability
    )


def _flop_source(row: pd.Series, judge: _Judge) -> str:
    """`datasheet of NVIDIA GeForce RTX 5070 @ measured clock 2.00 GHz`, `report's peak counters x
    measured clock 1.41 GHz`: the launch's peak_source in words, with the clock it was taken at."""
    parts = []
    for part in str(row.get("peak_source") or "").split(" + "):
        if part == "report":
            parts.append("report's peak counters x measured clock")
        elif part.startswith("datasheet"):
            name = f" of {judge.gpu.name}" if judge.gpu else ""
            parts.append(part.replace("datasheet", f"datasheet{name}", 1))
    text = " + ".join(parts) or "unknown source"
    clock = row.get("sm_clock_hz")
    return (
        f"{text} {si(clock, 'Hz')}" if "measured clock" in text and not is_missing(clock) else text
    )


def _dram_source(row: pd.Series, judge: _Judge) -> str:
    # derive's DRAM ceiling: the report's wins
    if not is_missing(row.get("report_peak_dram_bytes_per_s")):
        return "report's peak counters x measured DRAM clock"
    return f"datasheet of {judge.gpu.name}" if judge.gpu else "datasheet"


def _flop_fix(row: pd.Series, judge: _Judge) -> tuple[str, str]:
    """(fix, check) for a launch above its FLOP ceiling."""
    source = str(row.get("peak_source") or "")
    count = "the FLOP count" + _notes(row, "flop")
    # the GPU's own peak counters at its own clock: only the count can be wrong
    if "datasheet" not in source:
        return (
            f"its ceiling is the GPU's own peak counters at the measured clock, so check {count}",
            "check the FLOP count",
        )
    steps = [_check_gpu(judge)]
    # The report's own SIMT peak counters replace the datasheet; the clock scales a datasheet peak
    # to the launch's clock. Tensor precisions have no peak counter flopscope reads: the clock is
    # all there is.
    letters = [
        PRECISION_LETTER[p] for p in str(row.get("precision")).split("+") if p in PRECISION_LETTER
    ]
    metrics = ([] if "measured clock" in source else [_CLOCK]) + [
        m for m in PEAKS for letter in letters if f"_op_{letter}fma_" in m
    ]
    if metrics:
        steps.append(
            f"collect `{Missing('', metrics, 0).fix()}` so the ceiling is taken at the measured"
            " clock"
        )
    return "the ceiling or the FLOP count is wrong for it: " + ", or ".join(
        [*steps, f"check {count}"]
    ), _check_gpu(judge, short=True)


def _dram_fix(row: pd.Series, judge: _Judge) -> tuple[str, str]:
    """(fix, check) for a launch above its DRAM ceiling."""
    count = "the DRAM byte count" + _notes(row, "dram_bytes")
    if not is_missing(row.get("report_peak_dram_bytes_per_s")):
        return (
            (
                "its ceiling is the GPU's own peak counters at the measured DRAM clock, so check"
                f" {count}"
            ),
            "check the DRAM byte count",
        )
    steps = [
        _check_gpu(judge),
        f"collect `{Missing('', _DRAM_PEAKS, 0).fix()}` so the ceiling is the GPU's own",
    ]
    return "the ceiling or the DRAM byte count is wrong for it: " + ", or ".join(
        [*steps, f"check {count}"]
    ), _check_gpu(judge, short=True)


def _check_gpu(judge: _Judge, short: bool = False) -> str:
    """`check --gpu rtx5070 against the board it ran on (GPUs of CC 12.0: rtx5090, rtx5070,
    rtx5060ti)`: the datasheet is the suspect; `short`: the first words only."""
    if judge.gpu is None:
        return "pass --gpu NAME" if short else f"pass --gpu NAME ({_same_cc(judge.cc)})"
    if judge.by_option:
        step = f"check --gpu {judge.gpu.key}"
        return step if short else f"{step} against the board it ran on ({_same_cc(judge.cc)})"
    # the GPU the report (or the program's output) names: the datasheet may be a sibling board's
    step = f"check that it ran on a {judge.gpu.name}"
    return step if short else f"{step} (else pass --gpu NAME; {_same_cc(judge.cc)})"


def _same_cc(cc: object) -> str:
    """`GPUs of CC 12.0: rtx5090, rtx5070, rtx5060ti`: what --gpu may name (its CC must be the
    report's)."""
    same = [g.key for g in all_gpus() if not is_missing(cc) and same_cc(g.compute_capability, cc)]
    if not same:
        return "`flopscope gpus` lists the GPUs"
    return f"GPUs of CC {cc}: {', '.join(same[:6])}" + (
        f" +{len(same) - 6} more" if len(same) > 6 else ""
    )


def _notes(row: pd.Series, column: str) -> str:
    """` (its notes: dram_bytes derived from rates)`: what the row says was estimated or derived in
    `column` or in its duration (the rate divides by it), the first things to doubt. Notes of work
    left out are not named: they can only make the count lower."""
    notes = [
        n
        for col in ("estimated", "provenance")
        for n in str(row.get(col) or "").split("; ")
        if n.startswith((column, "duration_s")) and not _LOWER.search(n)
    ]
    return f" (its notes: {'; '.join(notes)})" if notes else ""
