"""Two runs compared kernel group by kernel group: time, FLOPs and bytes, and their deltas."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common.nvtx_stack import stack_label
from ..report.report import Report
from ..table.grouping import NO_RANGE
from ..table.module_tree import ROOT, display_path, path_names, tree_order
from ..table.names import distinct_short_names
from ..table.nvtx import ranges_list, readable_labels

COMPARED = ["count", "duration_s", "flop", "dram_bytes", "flop_per_s", "pct_of_peak", "pct_of_roof"]
# Totals: a kernel a run never launched spent no time and did no work there, so the side it is
# absent from counts as 0 in the change. Rates of a kernel that never ran are not 0 but undefined.
ADDITIVE = {"count", "duration_s", "flop", "dram_bytes"}
MODULE = "module"  # `--by module`: the nodes of the runs' module trees, matched by path
NVTX = "nvtx"  # `--by nvtx`: NVTX range groups, matched by their structured stack


def group_key(by: str) -> str:
    """The column a grouping's rows are matched on: the full kernel name, a module's path, an NVTX
    group's stack (`nvtx_stack`: its ranges apart, so that a range named `a/b` is not a range `a`
    holding a range `b`, as the joined `nvtx` label would have them)."""
    return {"name": "kernel_full", MODULE: "path", NVTX: "nvtx_stack"}.get(by, by)


def key_values(groups: pd.DataFrame, by: str) -> pd.Series:
    """The values a grouping's rows are matched on (`group_key`'s column): by NVTX range, the group
    of launches without a range has no stack and matches as ""."""
    column = groups[group_key(by)]
    return column.astype(object).fillna("") if by == NVTX else column


def groups_of(report: Report, by: str) -> pd.DataFrame:
    """A run's rows `by` a grouping, or its module tree's nodes."""
    return report.module_tree() if by == MODULE else report.group(by)


def diff_runs(a: Report, b: Report, by: str = "name") -> pd.DataFrame:
    """One row per group present in either run; `_a`, `_b`, `_delta` (b - a) and `_ratio` (b / a)
    columns.

    A value unknown on a side where the group ran (ncu recorded nothing) leaves its delta and ratio
    unknown (NaN), never 0. `attrs["by"]` is the grouping; `attrs["runs"]` holds each run's
    `RunSummary.as_dict()` ("a", "b"): the run totals, as the run list shows them (see `run_total`).

    Where either run has launches on several GPUs its groups are one per (name, GPU), so groups are
    matched on name and GPU (`attrs["by_gpu"]`, a `gpu` column): a kernel that ran on another GPU in
    the other run is "only in" each, not compared across hardware by accident.

    `by="module"`: the nodes of both runs' module trees matched by path (a node's roll-up spans its
    GPUs), with their `depth`, in tree order, each node's children largest time change first."""
    key = group_key(by)
    by_gpu = by != MODULE and (isinstance(a.judged_by, dict) or isinstance(b.judged_by, dict))
    keys = [key, "gpu"] if by_gpu else [key]
    ga, gb = (_keyed(groups_of(r, by), keys, by) for r in (a, b))
    out = pd.DataFrame(index=ga.index.union(gb.index, sort=False))
    fulls = out.index.get_level_values(key)
    # Each run shortened its names among its own kernels: two kernels only in A and only in B could
    # read the same.
    if by == "name":
        short = distinct_short_names(fulls)
        out["kernel"] = [short[f] for f in fulls]
    elif by == MODULE:
        out["kernel"] = [display_path(f) or ROOT for f in fulls]
        out["depth"] = [len(path_names(f)) for f in fulls]
    elif by == NVTX:  # matched by stack; named by label, by ranges where two stacks read alike
        stacks = [str(f) for f in fulls]
        out["kernel"] = readable_labels(stacks, NO_RANGE)
        out["nvtx"] = [stack_label(f) or NO_RANGE for f in stacks]
        out["nvtx_ranges"] = [ranges_list(f) for f in stacks]
    else:
        out["kernel"] = fulls
    absent_a, absent_b = ~out.index.isin(ga.index), ~out.index.isin(gb.index)
    for col in COMPARED:
        out[f"{col}_a"] = ga[col].astype(float)
        out[f"{col}_b"] = gb[col].astype(float)
        side_a, side_b = out[f"{col}_a"], out[f"{col}_b"]
        if col in ADDITIVE:
            side_a, side_b = side_a.mask(absent_a, 0.0), side_b.mask(absent_b, 0.0)
        out[f"{col}_delta"] = side_b - side_a
        # B/A of a group one run never launched is not 0 (or infinite): there is nothing to compare.
        out[f"{col}_ratio"] = (side_b / side_a.where(side_a != 0)).mask(absent_a | absent_b)
    out["presence"] = np.select([absent_a, absent_b], ["only in B", "only in A"], "both")
    if by == MODULE:
        out = out.iloc[tree_order(list(fulls), out["duration_s_delta"].abs())].reset_index(
            names=keys
        )
    else:
        order = out["duration_s_delta"].abs().sort_values(ascending=False, kind="stable").index
        out = out.loc[order].reset_index(names=keys)
    # Plain values only: pandas writes attrs into Parquet metadata as JSON.
    out.attrs.update(
        by=by, by_gpu=by_gpu, runs={"a": a.summary().as_dict(), "b": b.summary().as_dict()}
    )
    return out


def gpus_apart(a: list[str], b: list[str]) -> str | None:
    """A warning where runs A and B (their devices, `Report.gpu_names`) did not run on the same
    GPUs, saying what that does to the diff. Where either ran on several, groups are matched on name
    and GPU (`diff_runs`): a GPU only one run used gives groups only in that run, while those on a
    shared GPU still compare like with like, so "different GPUs" would overstate it. None where
    either run's GPU is unknown."""
    if not a or not b or set(a) == set(b):
        return None
    if len(a) == 1 and len(b) == 1:
        return (
            f"different GPUs ({a[0]} vs {b[0]}): time changes include the hardware, not only the"
            " code"
        )
    common = [g for g in a if g in b]
    if not common:
        return (
            f"no GPU in common ({' + '.join(a)} vs {' + '.join(b)}): groups are matched on name and"
            " GPU, so none is compared"
        )
    only = {side: [g for g in mine if g not in common] for side, mine in (("A", a), ("B", b))}
    only = {side: gpus for side, gpus in only.items() if gpus}
    said = ", ".join(f"{side} also ran on {' + '.join(gpus)}" for side, gpus in only.items())
    where = (
        f"only in {next(iter(only))}" if len(only) == 1 else "only in the run that used that GPU"
    )
    return (
        f"{said}: groups are matched on name and GPU, so those groups are {where}; the others"
        f" compare on the same GPU ({' + '.join(common)})"
    )


def ceilings_apart(a: Report, b: Report) -> str | None:
    """A warning where two runs of one GPU are judged against different datasheet ceilings (one
    stored or opened with `--gpu`): their % of peak then compares the ceilings as well as the code.
    Runs on different GPUs get the louder different-GPU warning instead."""
    if set(a.gpu_names) != set(b.gpu_names):
        return None
    judged = [r.meta.gpu_database_name for r in (a, b)]
    if judged[0] == judged[1]:
        return None
    how = [
        f"{name or 'no datasheet'}{' (--gpu)' if r.meta.gpu_source == '--gpu' else ''}"
        for name, r in zip(judged, (a, b), strict=True)
    ]
    return (
        f"A is judged against {how[0]} ceilings, B against {how[1]}: % of peak compares the"
        " ceilings too"
    )


def _keyed(groups: pd.DataFrame, keys: list[str], by: str) -> pd.DataFrame:
    """Groups indexed by `keys`; an unknown GPU (or NVTX stack) is "" so that it still matches (NaN
    keys never do)."""
    if by == NVTX:
        groups = groups.assign(**{keys[0]: key_values(groups, by)})
    if "gpu" in keys:
        groups = groups.assign(gpu=groups["gpu"].astype(object).fillna(""))
    return groups.set_index(keys[0] if len(keys) == 1 else keys)


def run_total(rows: pd.DataFrame, field: str, side: str) -> float:
    """A `RunSummary` field (`total_time_s`, `not_profiled`, ...) of run `side` ("a" or "b") of a
    diff: the run's own figure, as `flopscope runs` shows it. Launches ncu failed to profile are
    counted there, not summed, so one of them does not make the run's time unknown; a group's row
    cannot tell that apart from a profiled launch that lacks its time, so the total is not re-added
    from the rows. NaN when unknown."""
    value = rows.attrs.get("runs", {}).get(side, {}).get(field)
    return float("nan") if value is None else float(value)
