"""A group's shared columns (device, grid, GPU, ...): its one known value, "(mixed)" where its
launches differ, nothing where none has one. The vectorised count (a table of (group, value) counts,
or a sort of the pairs where that table would be big) is checked against pandas' own per-group
aggregation, on random columns of every dtype the readers make and on the real files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from flopscope.core.table import grouping
from flopscope.core.table.grouping import _same_or_mixed

from ..helpers.real_files import file_id, real_files, report_of

FILES = real_files()


def by_pandas(column: pd.Series, group: np.ndarray) -> pd.Series:
    """The rule, written the slow, obvious way: a Python call per group."""

    def one(s: pd.Series):
        values = pd.unique(s.dropna())
        return values[0] if len(values) == 1 else (None if len(values) == 0 else "(mixed)")

    return column.groupby(group, sort=True).agg(one)


def same(got: pd.Series, want: pd.Series) -> None:
    assert len(got) == len(want)
    for g, w in zip(got.tolist(), want.tolist(), strict=True):
        assert (pd.isna(g) and pd.isna(w)) or g == w, (g, w)


def random_columns(rng: np.random.Generator, n: int) -> dict[str, pd.Series]:
    names = np.array(
        ["void gemm<128>(float*)", "elementwise", "reduce_kernel", "(1, 2, 3)"], dtype=object
    )
    text = pd.Series(names[rng.integers(0, 4, n)], dtype=object)
    text[rng.random(n) < 0.3] = None
    ints = pd.Series(rng.integers(0, 3, n), dtype=np.int64)
    floats = pd.Series(rng.integers(0, 3, n).astype(float))
    floats[rng.random(n) < 0.4] = np.nan
    return {
        "object": text,
        "category": text.astype("category"),
        "arrow": text.astype("string[pyarrow]"),
        "int64": ints,
        "float": floats,
        "all missing": pd.Series([None] * n, dtype=object),
    }


@pytest.mark.parametrize("counted_by", ["table", "sort"])
@pytest.mark.parametrize("seed", range(8))
def test_each_group_has_its_one_value_mixed_or_none_on_random_columns(
    seed: int, counted_by: str, monkeypatch
) -> None:
    if counted_by == "sort":
        monkeypatch.setattr(grouping, "COUNT_TABLE_MAX", 0)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    group = pd.factorize(rng.integers(0, max(1, n // 8), n))[0]  # 0..k-1, as grouping numbers them
    for column in random_columns(rng, n).values():
        got, want = _same_or_mixed(column, group, int(group.max()) + 1), by_pandas(column, group)
        same(got, want)
        # categorical stays categorical
        assert got.dtype == want.dtype, (column.dtype, got.dtype, want.dtype)


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_each_group_of_a_real_file_has_the_value_pandas_finds(path) -> None:
    report = report_of(path)
    k = report.kernels
    group = pd.factorize(k["kernel_full"].astype(object).fillna(""))[0]
    rows = report.group("name", time_order=False)
    for col in ["kernel", "device", "stream", "grid", "block", "registers", "gpu", "cc"]:
        want = by_pandas(k[col], group)
        same(_same_or_mixed(k[col], group, int(group.max(initial=-1)) + 1), want)
        # and the grouped table shows it, in the order of its first launch of each name
        names = pd.unique(k["kernel_full"].astype(object).fillna(""))
        shown = rows.set_index("kernel_full")[col].reindex(names).tolist()
        same(pd.Series(shown, dtype=object), want)


@pytest.mark.parametrize("seed", range(8))
def test_a_function_of_each_groups_distinct_values_is_what_pandas_agg_gives(seed: int) -> None:
    """`_by_distinct` looks at the first launch of each (group, value) only and types what `func`
    gives itself: checked against pandas' own `groupby(...).agg` over every launch, dtype included
    (a categorical stays one only where every result is one of its categories)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    group = pd.factorize(rng.integers(0, max(1, n // 6), n))[0]
    words = np.array(["ok", "skipped", "a; b", "b", ""], dtype=object)
    text = pd.Series(words[rng.integers(0, len(words), n)], dtype=object)
    if seed % 2:
        text[rng.random(n) < 0.2] = None
    for column in (text, text.astype("category"), text.astype("string[pyarrow]")):
        for func in (grouping.joined_notes, grouping.group_status, len):
            got = grouping._by_distinct(column, group, func)
            want = column.groupby(group, sort=True).agg(lambda s, f=func: f(list(s.unique())))
            pd.testing.assert_series_equal(got, want, check_exact=True, check_index_type=False)
