"""Run-level figures (RunSummary): totals, and FLOP/s and DRAM B/s as shares of peak and the share
of time in arithmetic kernels (the *_efficiency fields; the views word them `FLOP %Peak`, `arith.
time`, `DRAM %Peak`), with what is unknown said."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..common.units import is_missing
from .columns import FLOP_PARTS
from .roofline import integer_mma

# a total and its known part
KNOWN_PART = {"total_time_s": "time_counted_s", "total_flop": "flop_counted"}


@dataclass
class RunSummary:
    """Run-level figures. A figure that needs a number some launch lacks (one ncu failed to profile
    included) is NaN, never a partial sum: `time_counted_s`, `flop_counted`,
    `unknown_flop_time_share` and the `unknown_*launches` counts say how much is known instead. The
    efficiencies are ratios over the launches of known time (`unknown_time_launches` says how many
    are not among them)."""

    launches: int
    not_profiled: int
    total_time_s: float  # NaN when some launch's time is unknown: see time_counted_s
    total_flop: float  # NaN when some launch's FLOPs are unknown: see flop_counted
    flops_efficiency: float  # total FLOP / sum(duration x peak of each kernel's precision)
    compute_efficiency: float  # share of kernel time in kernels that do arithmetic work
    bandwidth_efficiency: float  # total DRAM bytes / sum(duration x DRAM peak): duration-weighted
    flop_per_s: float
    dram_bytes: float
    flop_counted: float  # every FLOP counted, unknown parts left out: a lower bound of total_flop
    # share of the known kernel time in launches whose FLOPs are unknown
    unknown_flop_time_share: float
    # the kernel time of the launches of known time: a lower bound of total_time_s
    time_counted_s: float = math.nan
    # launches of unknown time (not profiled, or no duration collected)
    unknown_time_launches: int = 0
    # of those, launches whose FLOPs are unknown too (in no share of time)
    unknown_flop_untimed_launches: int = 0

    def as_dict(self) -> dict[str, float | None]:
        return {k: None if is_missing(v) else v for k, v in self.__dict__.items()}

    def known(self, total: str) -> tuple[float, bool]:
        """`total` (`total_time_s`, `total_flop`) as far as it is known: (the whole, False), or,
        where some launch lacks it, (its known part, True): a lower bound, shown `≥`. NaN where
        neither is known."""
        whole, part = getattr(self, total), getattr(self, KNOWN_PART[total])
        return (part, not math.isnan(part)) if math.isnan(whole) else (whole, False)


def summarize(k: pd.DataFrame) -> RunSummary:
    """Run-level figures over launches (pass the per-launch table, not a grouped one). A launch ncu
    failed to profile has no time and no FLOPs: the run's totals are unknown (their counted parts
    are lower bounds), and the efficiencies are over the launches of known time."""
    ok = k[k["status"] == "ok"] if "status" in k else k
    untimed = k["duration_s"].isna()
    timed = k[~untimed & ((k["status"] == "ok") if "status" in k else True)]
    counted_time = float(timed["duration_s"].sum(min_count=1))
    unknown_share = (
        float(timed.loc[timed["flop"].isna(), "duration_s"].sum() / counted_time)
        if counted_time
        else math.nan
    )
    time, flop = _total(k["duration_s"]), _total(k["flop"])
    with_peak = timed[timed["peak_flop_per_s"].notna()]
    peak_time = float((with_peak["duration_s"] * with_peak["peak_flop_per_s"]).sum(min_count=1))
    flops_eff = _total(with_peak["flop"]) / peak_time if peak_time else math.nan
    with_bw = timed[timed["peak_dram_bytes_per_s"].notna()]
    bw_time = float((with_bw["duration_s"] * with_bw["peak_dram_bytes_per_s"]).sum(min_count=1))
    bw_eff = _total(with_bw["dram_bytes"]) / bw_time if bw_time else math.nan
    figures = dict(
        launches=len(k),
        not_profiled=len(k) - len(ok),
        total_time_s=time,
        total_flop=flop,
        flops_efficiency=flops_eff,
        compute_efficiency=_compute_efficiency(timed, counted_time),
        bandwidth_efficiency=bw_eff,
        flop_per_s=flop / time if time else math.nan,
        dram_bytes=_total(k["dram_bytes"]),
        flop_counted=_counted(ok),
        unknown_flop_time_share=unknown_share,
        time_counted_s=counted_time,
        unknown_time_launches=int(untimed.sum()),
        unknown_flop_untimed_launches=int((untimed & k["flop"].isna()).sum()),
    )
    # A sum or ratio that overflowed float64 is no figure (see `finite`): unknown, not "∞%".
    values: dict[str, Any] = {  # RunSummary(**values): its counts and figures
        name: math.nan if isinstance(v, float) and math.isinf(v) else v
        for name, v in figures.items()
    }
    return RunSummary(**values)


def _counted(ok: pd.DataFrame) -> float:
    """Every FLOP that was counted (see counted_flop), summed; NaN where nothing was counted."""
    return float(counted_flop(ok).sum(min_count=1))


def counted_flop(k: pd.DataFrame) -> pd.Series:
    """Per row, every FLOP that was counted: the total, else the known precisions of a row whose
    total is unknown (an FP32 count stands even where FP64 counters are missing): a lower bound
    there. NaN where none."""
    return k["flop"].fillna(k[list(FLOP_PARTS)].sum(axis=1, min_count=1))


def _total(values: pd.Series) -> float:
    """The sum, or NaN if any value is unknown (or there are none): a partial sum would pass for the
    whole."""
    return float(values.sum()) if len(values) and values.notna().all() else math.nan


def _compute_efficiency(ok: pd.DataFrame, time: float) -> float:
    """Share of kernel time in launches that did arithmetic work: floating-point work, or integer
    tensor-core MMA (an INT8 GEMM is the run's math as much as an FP16 one, though not FLOPs). A
    launch with some FLOPs counted did, whatever else is unknown; one with none counted and some
    unknown cannot be placed, and then neither can the share."""
    parts = ok[list(FLOP_PARTS)]
    works = (parts > 0).any(axis=1) | integer_mma(ok)
    if not time or (ok["flop"].isna() & ~works).any():
        return math.nan
    return float(ok.loc[works, "duration_s"].sum()) / time
