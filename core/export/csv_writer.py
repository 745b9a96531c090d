"""A table as CSV text, a column at a time: cells are made into text by Arrow (numbers) or once per
distinct value (text), then joined into lines by Arrow. pandas' `to_csv` formats every cell in
Python, minutes at a million launches; this writes what it wrote (Python's csv quoting,
`-2.0`, empty for unknown)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .cells import defused
from .json_writer import (
    Cells,
    Rows,
    column_cells,
    concatenated,
    distinct_codes,
    float_text,
    float_values,
    in_ranges,
    integer_cells,
    merged,
    row_count,
    rows_of,
    text_by_code,
)

_CHUNK = 16384  # rows made into text at a time, by several threads (json_rows.in_ranges)


def write_csv(
    df: pd.DataFrame,
    out: BinaryIO,
    chunk: int = _CHUNK,
    safe: bool = False,
    order: np.ndarray | None = None,
) -> None:
    """`df` (no index) as CSV with a header row, UTF-8, `\\n` line ends, a cell quoted only where it
    must be. `safe`: every text cell and column name that a spreadsheet would run as a formula is
    `defused`; a column's distinct texts are, as they are made into text once anyway (defusing the
    table first cost as much again). `order`: the rows' positions in the order to write them, where
    not the table's: each chunk takes its rows, where a sorted copy of a large table would cost its
    size in memory and a share of the export's time."""
    text = _safe_text if safe else _text
    names = [defused(c) for c in df.columns] if safe else df.columns
    out.write((",".join(_quoted(str(c)) for c in names) + "\n").encode())
    if not len(df.columns):
        return
    columns = [
        column_cells(df.iloc[:, k], partial(_cells_of, text=text), "")
        for k in range(len(df.columns))
    ]
    count = len(df) if order is None else len(order)
    for lines in in_ranges(
        lambda start, stop: _lines(columns, rows_of(order, start, stop)), count, chunk
    ):
        out.write(lines)


def _lines(columns: list[Cells], rows: Rows) -> memoryview | bytes:
    """The lines of `rows`: each column's cells joined by `,` in one Arrow join. Commas as the
    join's separator, not as pieces of their own: half the pieces to join."""
    *cells, last = merged([cells(rows) for cells in columns], ",")
    if isinstance(last, str) and not cells:  # every column the same in every row
        return ((last + "\n") * row_count(rows)).encode()
    # the line end goes with the last column (a null there is an empty cell, then the line end)
    last = (
        last + "\n"
        if isinstance(last, str)
        else pc.binary_join_element_wise(last, "\n", "", null_handling="replace")
    )
    return concatenated(pc.binary_join_element_wise(*cells, last, ",", null_handling="replace"))


def _cells_of(col: pd.Series, text: Callable[[object], str]) -> Cells:
    """Each cell's CSV text; null (empty once joined, as pandas writes NaN and None) where missing.
    Numbers are viewed as numpy or Arrow, not copied; text is taken by its codes from its distinct
    values, each made into text once."""
    kind, categorical = col.dtype.kind, isinstance(col.dtype, pd.CategoricalDtype)
    if kind == "f" and not categorical:
        floats = float_values(col)
        return lambda rows: float_text(floats[rows])
    if kind in "iu" and not categorical:
        return integer_cells(col)
    if kind == "b" and col.dtype != object:
        flags = col.array
        return lambda rows: _bool_text(flags[rows])
    if (distinct := distinct_codes(col)) is not None:
        codes, uniques = distinct
        return text_by_code(codes, [*(_quoted(text(u)) for u in uniques), None])
    # Mixed cells (1 and True hash alike): one by one, as `str()` writes them.
    return lambda rows: pa.array(
        [None if _missing(v) else _quoted(text(v)) for v in col.iloc[rows].astype(object)],
        type=pa.string(),
    )


def _bool_text(flags: pd.api.extensions.ExtensionArray) -> pa.Array:
    """`True`/`False` as Python writes them, null where missing (a nullable boolean's NA)."""
    text = pa.array(
        np.where(np.asarray(flags.to_numpy(dtype=bool, na_value=False)), "True", "False")
    )
    return pc.if_else(pa.array(np.asarray(flags.isna())), pa.scalar(None, pa.string()), text)


def _text(value: object) -> str:
    if isinstance(value, float | np.floating):
        return float_text(np.array([value], dtype=np.float64))[0].as_py() or ""
    return str(value)


def _safe_text(value: object) -> str:
    return _text(defused(value))


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _quoted(text: str) -> str:
    """Python csv's minimal quoting: a cell with a comma, a quote, a line feed or a carriage return
    in quotes, its quotes doubled. A bare CR ends a row for spreadsheets and for Python's, pandas'
    and Arrow's readers."""
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text
