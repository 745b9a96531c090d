"""Launches aggregated into one row per kernel name or NVTX range (`Report.group`): summed counts,
time-weighted ceilings and percentages, and each group's one value of the columns its launches
share.

Speed is the point at a million launches: the key is hashed once, sums run over many columns per
groupby, and values shared by few distinct launches (names, devices, notes) are looked at once per
distinct value, never per launch in Python."""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np
import pandas as pd

from ..common.nvtx_stack import stack_label
from ..ncu.metrics import INSIGHT
from .columns import COUNTED, REPORT_PEAKS
from .metric_values import known_columns
from .nvtx import ranges_list, stack_groups
from .roofline import integer_mma

# Ceilings, clocks and ncu's per-launch percentages (speed of light, occupancy, waves, pipes): a
# group's is its launches', weighted by their time (the kernel screen says so).
WEIGHTED = [name for name, _, _ in REPORT_PEAKS] + [
    "sm_clock_hz",
    "peak_flop_per_s",
    "peak_dram_bytes_per_s",
    "peak_l2_bytes_per_s",
    "peak_l1_bytes_per_s",
    *INSIGHT,
]
# Launches of a group share these; a group's is their one value, or "(mixed)".
SHARED = (
    "kernel",
    "kernel_full",
    "nvtx",
    "process",
    "device",
    "stream",
    "grid",
    "block",
    "registers",
    "gpu",
    "cc",
)
NOTES = ["estimated", "provenance"]
NO_RANGE = "(no NVTX range)"
# (group, value) cells counted in a table (32 MB); more are sorted instead
COUNT_TABLE_MAX = 1 << 22
# values of the time-weighted columns converted and summed at a time (8 MB of doubles)
BLOCK_CELLS = 1 << 20


def aggregate(k: pd.DataFrame, key: str, by_gpu: bool = False) -> pd.DataFrame:
    """One row per distinct `key` (and GPU with `by_gpu`: a kernel's launches on an A100 and on an
    H100 are not one kernel), numbered in the order groups first appear; derived columns are left to
    `derive`."""
    codes, keys, stacks = _group_codes(k, key, by_gpu)
    groups = len(keys)
    grouped = k.groupby(codes, sort=True)
    # a stored run from before a tensor data type had its column
    summed = [c for c in COUNTED if c in k]
    # A group's sum is unknown if any launch ncu profiled lacks the value: a partial sum would pass
    # for the whole (FLOPs of 5 of 6 launches over the time of all 6). Launches ncu could not
    # profile add nothing.
    profiled = ~unprofiled(k)
    known = known_columns(k, summed)
    # Only columns some launch has are summed, and only those some profiled launch lacks can have a
    # gap: a groupby per column is ~8 ms at a million launches, and a report collects a few of the
    # counted columns.
    some = [c for c in summed if known[c].any()]
    out = pd.DataFrame(index=pd.RangeIndex(groups), columns=summed, dtype=float)
    if some:
        out = _column_sums(grouped, some).reindex(columns=summed)
    partial = [c for c in some if (profiled & ~known[c]).any()]
    if partial:
        gaps = pd.DataFrame({c: profiled & ~known[c] for c in partial}, index=k.index)
        out[partial] = out[partial].mask(gaps.groupby(codes, sort=True).any())
    out["count"] = grouped.size()
    # Their time is unknown, so the group's Time is the others': a lower bound (`≥`), and its mean
    # per launch is over count - not_profiled.
    out["not_profiled"] = pd.Series(~profiled, index=k.index).groupby(codes, sort=True).sum()
    has = {
        c: values.any() for c, values in known_columns(k, [c for c in WEIGHTED if c in k]).items()
    }
    weighted = [c for c in has if c not in INSIGHT or has[c]]  # few of INSIGHT's
    with_values = [c for c in weighted if has[c]]  # the others stay unknown
    # one grouping for all of them: a groupby per column was a third of the time at 100k launches
    means = _time_weighted(k, with_values, k["duration_s"], codes) if with_values else None
    unknown = np.full(groups, np.nan)
    # added as one frame: a hundred columns inserted one by one fragment it (pandas 2.2 warns)
    columns = {
        c: means[c].to_numpy() if means is not None and c in means else unknown for c in weighted
    }
    out = pd.concat([out, pd.DataFrame(columns, index=out.index)], axis=1)
    for col in [*SHARED, *(c for c in ("occupancy_limiter", "occupancy_limit_blocks") if c in k)]:
        out[col] = _same_or_mixed(k[col], codes, groups)
    out[key] = keys
    if stacks is not None:  # by NVTX range: each group's stack, and as the list --json writes
        out["nvtx_stack"] = [s or None for s in stacks]
        out["nvtx_ranges"] = [ranges_list(s) for s in stacks]
    out["peak_source"] = _sources(k["peak_source"], codes)
    for col in NOTES:
        out[col] = _by_distinct(k[col], codes, joined_notes)
    # a group of integer-MMA launches only is judged by no FLOP ceiling, as they are
    if "integer_mma" in k:
        out["integer_mma"] = integer_mma(k).groupby(codes, sort=True).all()
    out["status"] = _by_distinct(k["status"], codes, group_status)
    out["launch_id"] = grouped["launch_id"].min()
    return out.reset_index(drop=True)


def joined_notes(values: list[object]) -> str:
    """A group's notes: each distinct part of its launches' notes ('a; b'), once, in order."""
    return "; ".join(
        dict.fromkeys(part for v in values if isinstance(v, str) and v for part in v.split("; "))
    )


def group_status(values: list[object]) -> object:
    """A group's status: `ok` where any launch of it was profiled, else its first launch's."""
    return "ok" if any(isinstance(v, str) and v == "ok" for v in values) else values[0]


def unprofiled(k: pd.DataFrame) -> np.ndarray:
    """Launches ncu did not profile (status not `ok`): they have no values, time included."""
    return (
        (k["status"] != "ok").to_numpy(dtype=bool)
        if "status" in k
        else np.zeros(len(k), dtype=bool)
    )


def _group_codes(
    k: pd.DataFrame, key: str, by_gpu: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Each launch's group number (0, 1, ... in order of first appearance), each group's `key`
    value and, by NVTX range, each group's stack (`nvtx.grouping_stack`; None otherwise)."""
    stacks = None
    if key == "nvtx":
        # The structured stack, not the joined label: a `/` in a range's name is no separator.
        # emit_nvtx's call numbers and shapes left out: one group per range, not per call.
        codes, distinct = stack_groups(k)
        stacks = np.asarray(distinct, dtype=object)
        keys = np.array([stack_label(s) or NO_RANGE for s in distinct], dtype=object)
    else:
        # Factorized once: hashing long C++ kernel names for every aggregate dominated grouping
        # time.
        codes, uniques = factorize_filled(k[key], "")
        keys = np.asarray(uniques, dtype=object)
    if by_gpu:  # one group per (key, GPU)
        gpu_codes, _ = pd.factorize(k["gpu"].astype(object), sort=False)
        pairs, _ = pd.factorize(
            codes.astype(np.int64) * (int(gpu_codes.max()) + 2) + gpu_codes + 1, sort=False
        )
        first = np.unique(pairs, return_index=True)[1]  # each pair's first launch
        chosen = codes[first]
        return pairs, keys[chosen], None if stacks is None else stacks[chosen]
    return codes, keys, stacks


def factorize_filled(column: pd.Series, fill: str) -> tuple[np.ndarray, np.ndarray]:
    """`pd.factorize(column.fillna(fill), sort=False)` for any dtype: a categorical refuses a fill
    outside its categories in pandas 2.x, and casting a million names to objects first costs more
    than the factorizing."""
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
    values = np.asarray(uniques, dtype=object)
    missing = codes < 0
    if not missing.any():
        return codes, values
    at = np.flatnonzero(values == fill)  # a real `fill` value and the missing ones are one group
    codes = np.where(missing, at[0] if len(at) else len(values), codes)
    values = values if len(at) else np.append(values, np.array([fill], dtype=object))
    codes, order = pd.factorize(codes, sort=False)  # numbered again in order of first appearance
    return codes, values[order]


def _time_weighted(
    k: pd.DataFrame, columns: list[str], duration: pd.Series, codes: np.ndarray
) -> pd.DataFrame:
    """Each group's mean of each of `columns` over the time of the launches that have it: a launch
    without it (its metric set lacked the counter) would otherwise count as a peak of 0 and lower
    the group's ceiling. The plain mean where the group's launches with the value took no known
    time."""
    dur = duration.fillna(0.0).to_numpy(dtype=float)
    # A few columns at a time, each sum a column's own: a hundred columns of a million launches at
    # once took arrays of hundreds of MB, each first touch of their pages a cost of its own.
    step = max(1, BLOCK_CELLS // max(len(k), 1))
    out = pd.concat(
        [
            _weighted_means(k[columns[at : at + step]].astype(float), dur, codes)
            for at in range(0, len(columns), step)
        ],
        axis=1,
    )
    # rare: only those need the plain mean
    untimed = out.columns[out.isna().any().to_numpy()].tolist()
    if untimed:
        means = k[untimed].astype(float).groupby(codes, sort=True)
        out[untimed] = out[untimed].fillna(
            pd.DataFrame({c: means[c].mean() for c in untimed}, columns=untimed)
        )
    return out


def _column_sums(grouped: pd.api.typing.DataFrameGroupBy, columns: list[str]) -> pd.DataFrame:
    """Each group's sum of each of `columns` (unknown where none of its launches has a value), one
    column at a time. pandas rounds a sum over a block of several columns otherwise than one
    column's, and the launches table's blocks are not the same in a report read afresh (a block per
    column derive added) and one read from the cache (a block per dtype): grouped by blocks, the
    same launches could sum a last bit apart."""
    return pd.DataFrame({c: grouped[c].sum(min_count=1) for c in columns}, columns=columns)


def _weighted_means(values: pd.DataFrame, dur: np.ndarray, codes: np.ndarray) -> pd.DataFrame:
    """`values`' time-weighted means per group, over the launches with a value and a time."""
    # As one 2-D block: the launches table holds its columns in blocks of their own, which pandas
    # would group one at a time (a third of grouping 100k launches by name).
    # Column-major whatever blocks the columns came from: each column's sum then runs over the same
    # memory layout, so it is rounded alike for a report read afresh and one read from the cache.
    x = np.asfortranarray(values.to_numpy(dtype=float, na_value=np.nan))
    both = ~np.isnan(x) & (dur > 0)[:, None]
    weighted = np.where(both, x * dur[:, None], np.nan)
    num = pd.DataFrame(weighted, columns=values.columns).groupby(codes, sort=True).sum(min_count=1)
    weight = (
        pd.DataFrame(both * dur[:, None], columns=values.columns).groupby(codes, sort=True).sum()
    )
    return num / weight.where(weight > 0)


def _same_or_mixed(column: pd.Series, group: np.ndarray, groups: int) -> pd.Series:
    """Per group (numbered 0..groups-1): its one known value, "(mixed)" where it has several, None
    where none. Counted over distinct (group, value) pairs with numpy: a Python call per group and
    column was most of the time of grouping 100k launches by name."""
    values, uniques = _numbered(column)
    known = values >= 0
    width = len(uniques) + 1
    # a table of (group, value) counts: no sort of a million pairs
    if groups * width <= COUNT_TABLE_MAX:
        counts = np.bincount(
            group[known] * width + values[known], minlength=groups * width
        ).reshape(groups, width)
        present = counts > 0
        distinct, value = present.sum(axis=1), present.argmax(axis=1)
    else:
        # sorted by group, then value
        pairs = np.unique(group[known].astype(np.int64) * width + values[known])
        owner = pairs // width
        distinct = np.bincount(owner, minlength=groups)
        value = np.zeros(groups, dtype=np.int64)
        value[owner] = pairs % width  # read only where a group has one value
    out = np.full(groups, None, dtype=object)
    out[distinct > 1] = "(mixed)"
    one = np.flatnonzero(distinct == 1)
    out[one] = np.asarray(uniques, dtype=object)[value[one]]
    result = pd.Series(out.tolist(), name=column.name)  # typed as pandas types its own aggregations
    fits = isinstance(column.dtype, pd.StringDtype) or not (distinct > 1).any()  # "(mixed)" is text
    if isinstance(column.dtype, pd.api.extensions.ExtensionDtype) and fits:
        # categorical names, nullable integers, Arrow strings: kept
        result = result.astype(column.dtype)
    return result


def _numbered(column: pd.Series) -> tuple[np.ndarray, Collection[object]]:
    """Each value's number (-1: missing) and the values numbered: a categorical's own codes, no
    hashing."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64), column.cat.categories
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return codes.astype(np.int64), uniques


def _sources(source: pd.Series, codes: np.ndarray) -> pd.Series:
    """Each group's peak sources, every distinct one once ('report + datasheet @ measured
    clock')."""
    parts = list(
        dict.fromkeys(p for v in pd.unique(source.dropna()) for p in str(v).split(" + ") if p)
    )
    if len(parts) <= 1:
        has = source.notna() & (source.astype(object) != "")
        return has.groupby(codes, sort=True).any().map({True: parts[0] if parts else "", False: ""})
    # Which parts each distinct source names, then each launch's row of that: 1M launches hold a few
    # sources.
    value_codes, values = pd.factorize(source.astype(object).fillna(""))
    names = np.array([[p in str(v) for p in parts] for v in values], dtype=bool).reshape(
        len(values), len(parts)
    )
    found = (
        pd.DataFrame(names[value_codes], index=source.index, columns=parts)
        .groupby(codes, sort=True)
        .any()
    )
    rows = found.to_numpy(dtype=bool).tolist()  # a Python call per row, not pandas' per row
    return pd.Series(
        [" + ".join(p for p, has in zip(parts, row, strict=True) if has) for row in rows],
        index=found.index,
    )


def _by_distinct(
    column: pd.Series, group: np.ndarray, func: Callable[[list[object]], object]
) -> pd.Series:
    """Per group, `func` of the distinct values of `column` its launches hold, in the order they
    first appear (missing ones as one value): `column.groupby(group, sort=True).agg(lambda s:
    func(list(s.unique())))`, typed as pandas types it. A million launches hold a few hundred names,
    devices or notes: only the first launch of each (group, value) is looked at, and pandas' call
    per group (~0.1 ms, most of grouping a small report) is made only for a column that is not
    categorical, as the readers' are."""
    # missing: -1, one row of it kept per group too
    values, _ = pd.factorize(column, use_na_sentinel=True)
    pairs, _ = pd.factorize(group.astype(np.int64) * (int(values.max(initial=-1)) + 2) + values + 1)
    # factorize numbers the pairs in the order they first appear: a pair's first row is where the
    # count grows.
    seen = np.maximum.accumulate(pairs)
    first = np.flatnonzero(np.r_[True, seen[1:] > seen[:-1]])
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column.iloc[first].groupby(group[first], sort=True).agg(lambda s: func(list(s)))
    distinct: dict[int, list[object]] = {}
    for owner, value in zip(group[first].tolist(), column.iloc[first].tolist(), strict=True):
        distinct.setdefault(owner, []).append(value)
    owners = sorted(distinct)
    return _as_pandas_types(
        [func(distinct[g]) for g in owners], column.dtype, pd.Index(owners), column.name
    )


def _as_pandas_types(
    results: list[object], dtype: pd.CategoricalDtype, index: pd.Index, name: object
) -> pd.Series:
    """Results of a function of a categorical column's values typed as pandas' groupby `agg` types
    them: of the column's dtype where each is one of its categories (or missing), else inferred
    as a Series of them is (object text in pandas 2, `str` in pandas 3)."""
    codes = dtype.categories.get_indexer(results)
    if all(code >= 0 or pd.isna(value) for code, value in zip(codes, results, strict=True)):
        return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype), index=index, name=name)
    return pd.Series(results, index=index, name=name)
