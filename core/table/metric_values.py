"""A metric table's columns as numpy arrays, each read once: counting a launch's FLOPs and bytes
reads a hundred counters, many of them several times, and a pandas Series per read and per step of
arithmetic cost more than the arithmetic itself on a report of a few launches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd


class MetricValues:
    """The columns of one metric table, read on demand and kept: `floats(name)` as numbers,
    `known(name)` as where the table holds a value."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self.rows = len(df)
        self._floats: dict[str, np.ndarray] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.df

    def floats(self, name: str) -> np.ndarray:
        """Metric `name` as floats: NaN where unknown or not a number, all NaN where the table lacks
        it. Read-only: every caller shares it."""
        values = self._floats.get(name)
        if values is None:
            values = self._read(name)
            values.flags.writeable = False
            self._floats[name] = values
        return values

    def _read(self, name: str) -> np.ndarray:
        if name not in self.df:
            return np.full(self.rows, np.nan)
        column = self.df[name]
        if column.dtype == np.float64:
            return np.asarray(column.to_numpy()).view()  # a view: its flag is ours to set
        values: np.ndarray = pd.to_numeric(column, errors="coerce").astype(float).to_numpy()
        return values

    def known(self, name: str) -> np.ndarray:
        """Where the table holds a value of column `name`."""
        return has_value(self.df[name])

    def any_known(self, names: Iterable[str]) -> np.ndarray:
        """Where the table holds a value of any of the columns `names`."""
        return any_of((self.known(name) for name in names), self.rows)


def has_value(column: pd.Series) -> np.ndarray:
    """Where `column` holds a value (of any type: a text cell counts): pandas' `notna`, without the
    Series of it for a column of floats."""
    values: np.ndarray = (
        ~np.isnan(column.to_numpy())
        if column.dtype == np.float64
        else column.notna().to_numpy(dtype=bool)
    )
    return values


# cells of a table read at a time by `float_blocks` (512 kB of floats)
BLOCK_CELLS = 1 << 16


def float_blocks(k: pd.DataFrame, names: list[str]) -> Iterator[tuple[list[str], np.ndarray]]:
    """The float64 columns `names` of `k`, a few at a time: (their names, their values as rows x
    columns). One DataFrame take per block, not a Series per column (~20 us each: most of the time
    spent on a table of a few rows); where one column fills a block (a table of ~65k rows or more),
    each alone, as a view, so no column is copied."""
    step = max(1, BLOCK_CELLS // max(len(k), 1))
    at = k.columns.get_indexer(names)  # by position: a take by names looks each up again
    for start in range(0, len(names), step):
        chunk = at[start : start + step]
        if len(chunk) == 1:
            values = k.iloc[:, chunk[0]].to_numpy()[:, None]
        else:
            values = k.take(chunk, axis=1).to_numpy(dtype=float)
        yield names[start : start + step], values


def known_columns(k: pd.DataFrame, names: list[str]) -> dict[str, np.ndarray]:
    """`has_value` of each of the columns `names` of `k` (its float64 ones by `float_blocks`)."""
    dtypes = dict(zip(k.columns, k.dtypes, strict=True))
    floats = [c for c in names if dtypes[c] == np.float64]
    known = {c: has_value(k[c]) for c in names if dtypes[c] != np.float64}
    for chunk, values in float_blocks(k, floats):
        present = ~np.isnan(values)
        known.update({c: present[:, j] for j, c in enumerate(chunk)})
    return {c: known[c] for c in names}


def any_of(masks: Iterable[np.ndarray], rows: int) -> np.ndarray:
    """Rows where any of `masks` holds (none: False)."""
    out = np.zeros(rows, dtype=bool)
    for mask in masks:
        out |= mask
    return out


def all_of(masks: Iterable[np.ndarray], rows: int) -> np.ndarray:
    """Rows where all of `masks` hold (none: True)."""
    out = np.ones(rows, dtype=bool)
    for mask in masks:
        out &= mask
    return out


def first_known(values: np.ndarray, *fallbacks: np.ndarray) -> np.ndarray:
    """`values`, each NaN taken from the first of `fallbacks` with a number there (as pandas'
    `fillna` chained)."""
    for more in fallbacks:
        values = np.where(np.isnan(values), more, values)
    return values


def where_known(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` where `mask` holds, NaN elsewhere (as pandas' `where`)."""
    return np.where(mask, values, np.nan)


def zero_filled(values: np.ndarray) -> np.ndarray:
    """`values` with NaN as 0 (as pandas' `fillna(0.0)`)."""
    return np.where(np.isnan(values), 0.0, values)
