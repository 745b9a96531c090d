"""A table for the writers' chunk-at-a-time text (core/export/csv_writer.py,
core/export/json_writer.py)."""

from __future__ import annotations

import math

import pandas as pd


def same_in_some_chunks() -> pd.DataFrame:
    """Chunks of 4 rows in which each column is the same in every row in some chunks and not in
    others (a column the same in a whole chunk is made into text once): -0.0 beside 0.0, NaN, a
    category, every column."""
    return pd.DataFrame(
        {
            "zero": [0.0] * 4 + [-0.0] * 4 + [0.0, -0.0, 0.0, 0.0],
            "nan": [math.nan] * 8 + [1.5, math.nan, math.nan, math.nan],
            "i": [7] * 12,
            "b": [True] * 4 + [False] * 4 + [True, False, True, True],
            "c": pd.Categorical(["a,b"] * 4 + [None] * 4 + ["x", "x", "y", "x"]),
        }
    )
