"""How a value becomes a cell of an export: JSON-ready values, whole counts as integers, nested
values as JSON text, Arrow-safe text columns, and CSV text a spreadsheet will not run as a
formula."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd

from ..common.units import whole_numbers
from ..table.columns import INTEGER


def records(df: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as plain dicts, NaN as None, numpy scalars as Python numbers, counts and ids as
    integers."""
    df = whole_integers(df)
    clean = df.astype(object).where(df.notna(), None)
    return [{k: _plain(v) for k, v in row.items()} for row in clean.to_dict(orient="records")]


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def json_ready(value: object) -> object:
    """VALUE (nested dicts, lists, tuples) for strict JSON: NaN, ±inf and pandas' NA as null
    (Python's json writes NaN and Infinity, which JSON has not), numpy scalars as Python numbers."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return None if value is pd.NA else _plain(value)


# What makes a spreadsheet read a cell as a formula (OWASP, "CSV injection"): `=HYPERLINK(...)`,
# `+cmd|' /C calc'!A0`, `@SUM(1)`, and a tab or CR ahead of any of them.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


_AFTER_BREAK = re.compile(r"([\r\n]+)([=+\-@\t])")


def defused(value: object) -> object:
    """Text that starts like a formula prefixed with `'`, as OWASP recommends: a spreadsheet shows
    it as text instead of running it (kernel names come from the profiled program, and CSV exports
    get opened in spreadsheets). Numbers are left alone, as numbers and as text (`-5`, `+1e3`: a
    spreadsheet reads them as the number either way); anything else is returned as it is. Each line
    of a text with line breaks is defused the same way."""
    if not isinstance(value, str):
        return value
    # a spreadsheet may start a line of the cell, or a row, at each break
    if "\n" in value or "\r" in value:
        value = _AFTER_BREAK.sub(r"\1'\2", value)
    if value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def whole_integers(df: pd.DataFrame) -> pd.DataFrame:
    """Ids and counts (`columns.INTEGER`) as nullable integers where every value is whole, so a CSV
    says 7, not 7.0."""
    converted = {
        col: whole_numbers(df[col])
        for col in df.columns
        if _integer(col) and not pd.api.types.is_integer_dtype(df[col])
    }
    return df.assign(**converted) if converted else df


def _integer(column: object) -> bool:
    """An id or count, or a diff's count of one side or its change (`count_a`, `count_delta`)."""
    name = str(column)
    base, _, side = name.rpartition("_")
    return name in INTEGER or (base in INTEGER and side in ("a", "b", "delta"))


def nested_as_json(df: pd.DataFrame) -> pd.DataFrame:
    """Dict and list cells (a run's `params`, its `lower_bounds`) as JSON text, for formats with no
    nested values: CSV would write Python's repr (`{'batch_size': '8'}`) and Arrow refuses a column
    of lists, while JSON text reads back as the dict or list `--json` and a JSON export give."""
    nested = [
        col
        for col in df.columns
        if df[col].dtype == object  # all-text columns (names) need no look
        and pd.api.types.infer_dtype(df[col]) not in ("string", "empty")
        and df[col].map(lambda v: isinstance(v, dict | list)).any()
    ]
    return (
        df.assign(
            **{
                col: df[col].map(lambda v: json.dumps(v) if isinstance(v, dict | list) else v)
                for col in nested
            }
        )
        if nested
        else df
    )


def arrow_safe(df: pd.DataFrame) -> pd.DataFrame:
    """Object columns (ids that are numbers in one report and text in another) become text
    categories, which Arrow accepts and stores once per distinct value. The other columns are
    shared, not copied."""
    df = df.copy(deep=False)  # replacing a column of the copy leaves the caller's frame as it was
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = _text_category(df[col])
    return df


def _text_category(col: pd.Series) -> pd.Categorical:
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    labels, remap = np.unique(
        np.array([str(u) for u in uniques], dtype=object), return_inverse=True
    )
    codes = np.where(codes >= 0, remap[np.maximum(codes, 0)] if len(remap) else -1, -1)
    return pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object))
