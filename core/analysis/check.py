"""A regression gate: a run's kernel groups against a pinned baseline's, for CI.

A matched group regresses when its time per launch rises, or its FLOP/s or % of roof falls, by more
than `max_drop` of the baseline's value. Time per launch, not total time: a run that launches a
kernel more often did more work, it did not get slower. Groups that took less than `min_share` of
the baseline's kernel time are listed but never fail the check: a 2 us kernel varies by more than
any sensible threshold from run to run. Groups in only one run are listed as new or vanished, never
judged."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..report.report import Report
from ..table.module_tree import path_names
from .diff import MODULE, NVTX, diff_runs

# (column of diff_runs, what it is, +1 where higher is better, -1 where lower is)
GATED = [
    ("time_per_launch_s", "time/launch", -1),
    ("flop_per_s", "FLOP/s", +1),
    ("pct_of_roof", "% of roof", +1),
]
EVERY_METRIC = tuple(column for column, _, _ in GATED)


@dataclass(frozen=True)
class Check:
    """`rows`: one per group of either run, with `<metric>_base`, `<metric>_run`, `<metric>_change`
    (run / base
    - 1) for each gated metric, `share` (of the baseline's kernel time), `gated` (large enough to
      judge),
    `presence` ("both", "new", "vanished") and `verdict` ("regressed", "ok", "too small", "new",
    "vanished"), `worst` naming the metric that moved most the wrong way and `worst_change` its
    change."""

    rows: pd.DataFrame
    max_drop: float
    min_share: float
    by: str
    judged_on: tuple[str, ...] = EVERY_METRIC  # the GATED columns a group can regress on

    @property
    def regressed(self) -> pd.DataFrame:
        return self.rows[self.rows["verdict"] == "regressed"]

    @property
    def judged(self) -> int:
        """How many groups were judged: a gate that compared nothing (no group matched, or every
        match too small) has not passed."""
        return int(self.rows["gated"].sum())

    @property
    def passed(self) -> bool:
        return self.regressed.empty and self.judged > 0


def other_gpus(run: Report, baseline: Report) -> str | None:
    """How the run's GPUs differ from the baseline's (`H100 80GB HBM3 vs H200`), None where they are
    the same or either is unknown: time per launch and FLOP/s then compare the hardware, not the
    code."""
    a, b = run.gpu_names, baseline.gpu_names
    if not a or not b or set(a) == set(b):
        return None
    return f"{' + '.join(a)} vs {' + '.join(b)}"


def other_metrics(run: Report, baseline: Report) -> str | None:
    """Where the two reports collected different ncu metrics: a column one lacks compares as
    unknown."""
    a, b = set(run.meta.metrics_collected), set(baseline.meta.metrics_collected)
    if not a or not b or a == b:
        return None
    return f"{len(a - b)} ncu metric(s) only in the run, {len(b - a)} only in the baseline"


def check_runs(
    run: Report,
    baseline: Report,
    by: str = "name",
    max_drop: float = 0.05,
    min_share: float = 0.01,
    judged_on: tuple[str, ...] = EVERY_METRIC,
) -> Check:
    """`run` judged against `baseline`, group by group (matched as `flopscope diff` matches them:
    `by="module"`, module tree nodes by path, each node's share of the baseline's time its
    roll-up's), on the GATED metrics `judged_on` (runs on other GPUs: % of roof alone, each against
    its own GPU's roof)."""
    if not 0 < max_drop < 1:
        raise ValueError("max_drop is a fraction between 0 and 1")
    diff = diff_runs(baseline, run, by=by)
    rows = pd.DataFrame({"kernel": diff["kernel"]})
    # `kernel` joins a node's names with `/`; the list is exact where a name holds one
    if by == MODULE:
        rows["path_names"] = [path_names(p) for p in diff["path"]]
    # by NVTX range: matched by stack; `kernel` reads it, `nvtx_ranges` is each range whole
    if by == NVTX:
        rows["nvtx_ranges"] = diff["nvtx_ranges"]
    if "gpu" in diff:
        rows["gpu"] = diff["gpu"]
    rows["presence"] = diff["presence"].map(
        {"both": "both", "only in B": "new", "only in A": "vanished"}
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        for side, suffix in (("base", "_a"), ("run", "_b")):
            rows[f"time_per_launch_s_{side}"] = diff[f"duration_s{suffix}"] / diff[
                f"count{suffix}"
            ].where(diff[f"count{suffix}"] > 0)
            rows[f"flop_per_s_{side}"] = diff[f"flop_per_s{suffix}"]
            rows[f"pct_of_roof_{side}"] = diff[f"pct_of_roof{suffix}"]
        # A module tree holds each launch once per node on its path: the root's time is the
        # baseline's.
        total = (
            diff.loc[diff["path"] == "", "duration_s_a"].sum()
            if by == MODULE
            else diff["duration_s_a"].sum()
        )
        rows["share"] = diff["duration_s_a"] / total if total > 0 else np.nan
        wrong_way = []
        for column, _, better in GATED:
            base, now = rows[f"{column}_base"], rows[f"{column}_run"]
            rows[f"{column}_change"] = (now / base.where(base > 0) - 1).where(
                rows["presence"] == "both"
            )
            # > 0: moved the wrong way by that fraction
            wrong_way.append(-better * rows[f"{column}_change"])
    judged = [k for k, (column, _, _) in enumerate(GATED) if column in judged_on]
    worse = np.column_stack([wrong_way[k].to_numpy(dtype=float) for k in judged])
    known = ~np.isnan(worse).all(axis=1)
    pick = np.nan_to_num(worse, nan=-np.inf).argmax(axis=1)
    names = np.array([GATED[k][0] for k in judged], dtype=object)
    rows["worst"] = np.where(known, names[pick], None)
    signs = np.array([GATED[k][2] for k in judged])  # each metric's `better`
    rows["worst_change"] = np.where(known, -signs[pick] * worse[np.arange(len(pick)), pick], np.nan)
    rows["gated"] = (rows["presence"] == "both") & (rows["share"] >= min_share)
    regressed = rows["gated"] & known & (np.nan_to_num(worse, nan=-np.inf).max(axis=1) > max_drop)
    rows["verdict"] = np.select(
        [rows["presence"] == "new", rows["presence"] == "vanished", regressed, ~rows["gated"]],
        ["new", "vanished", "regressed", "too small"],
        "ok",
    )
    order = {"regressed": 0, "ok": 1, "too small": 2, "new": 3, "vanished": 4}
    rows = rows.sort_values(
        ["verdict", "share"],
        key=lambda s: s.map(order) if s.name == "verdict" else -s,
        kind="stable",
    ).reset_index(drop=True)
    return Check(rows, max_drop, min_share, by, judged_on)
