"""Two runs compared kernel group by kernel group: time, FLOPs and bytes, and their deltas."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .report import Report

COMPARED = ["count", "duration_s", "flop", "dram_bytes", "flop_per_s", "pct_of_peak"]


def diff_runs(a: Report, b: Report, by: str = "name") -> pd.DataFrame:
    """One row per group present in either run; `_a`, `_b`, `_delta` (b - a) and `_ratio` (b / a) columns."""
    key = "kernel_full" if by == "name" else by
    ga = a.group(by).set_index(key)
    gb = b.group(by).set_index(key)
    out = pd.DataFrame(index=ga.index.union(gb.index, sort=False))
    out["kernel"] = ga["kernel"].combine_first(gb["kernel"]) if by == "name" else out.index
    for col in COMPARED:
        out[f"{col}_a"] = ga[col].astype(float)
        out[f"{col}_b"] = gb[col].astype(float)
        out[f"{col}_delta"] = out[f"{col}_b"].fillna(0) - out[f"{col}_a"].fillna(0)
        out[f"{col}_ratio"] = out[f"{col}_b"] / out[f"{col}_a"].where(out[f"{col}_a"] != 0)
    out["presence"] = np.select([out["count_a"].isna(), out["count_b"].isna()], ["only in B", "only in A"], "both")
    order = out["duration_s_delta"].abs().sort_values(ascending=False, kind="stable").index
    return out.loc[order].reset_index(names=key)
