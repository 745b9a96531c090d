"""CSV exports are made into text a column at a time (core/export/csv_writer.py); each cell must
read back as what pandas' `to_csv` (the writer before) wrote: the same text in text cells, the same
number in numeric ones, on every real fixture and every grouping."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pandas as pd
import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.export.cells import defused, nested_as_json, whole_integers
from flopscope.core.export.csv_writer import write_csv
from flopscope.core.report.report import GROUPINGS

from ..conftest import FIXTURES
from ..helpers.text_chunks import same_in_some_chunks

REPORTS = (
    sorted(p for p in FIXTURES.glob("*") if p.suffix in (".csv", ".ncu-rep", ".log"))
    if FIXTURES.is_dir()
    else []
)


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _same_csv(new: str, old: str) -> None:
    a = list(csv.reader(io.StringIO(new, newline="")))
    b = list(csv.reader(io.StringIO(old, newline="")))
    assert len(a) == len(b) and a[0] == b[0]
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert len(x) == len(y), f"row {i}"
        for j, (c, d) in enumerate(zip(x, y, strict=True)):
            if c != d:  # 1e-07 and 1e-7 are one number
                n, m = _number(c), _number(d)
                assert (
                    n is not None
                    and m is not None
                    and (n == m or (math.isnan(n) and math.isnan(m)))
                ), f"row {i}, {a[0][j]}: {c!r} != {d!r}"


def _both(df: pd.DataFrame, safe: bool = False) -> tuple[str, str]:
    """What write_csv writes, and what pandas writes of the same table (its text defused cell by
    cell where `safe`)."""
    out = io.BytesIO()
    write_csv(df, out, safe=safe)
    # Python's csv quotes a cell with a CR only when its row ends in one: pandas' `\n` rows leave a
    # bare CR, which every reader takes as the row's end (issue 38); write_csv quotes it.
    return out.getvalue().decode(), (_defused_cell_by_cell(df) if safe else df).to_csv(
        index=False, lineterminator="\r\n"
    )


def _defused_cell_by_cell(df: pd.DataFrame) -> pd.DataFrame:
    text = [
        c
        for c in df.columns
        if df[c].dtype == object or not pd.api.types.is_numeric_dtype(df[c].dtype)
    ]
    out = df.assign(**{c: df[c].astype(object).map(defused) for c in text if df[c].dtype != bool})
    return out.rename(columns=defused)


@pytest.mark.parametrize("path", REPORTS, ids=[p.name for p in REPORTS])
def test_csv_reads_back_as_pandas_wrote_it_on_every_real_fixture(path):
    try:
        report = read_report(path)
    except FlopscopeError:
        pytest.skip(f"{path.name} is refused by the reader")
    for by in GROUPINGS:
        _same_csv(*_both(nested_as_json(whole_integers(report.view(by))), safe=True))


def test_odd_cells_read_back_as_pandas_wrote_them():
    n = 8
    df = pd.DataFrame(
        {
            "f": [0.1, 1.0, -2.0, 1e-7, 1e20, math.nan, math.inf, -0.0],
            "i": pd.array([1, None, 3, 4, 5, 6, 7, 8], dtype="Int64"),
            "n": np.arange(n),
            "b": [True, False] * 4,
            "t": ["a,b", 'q"x', "line\nbreak", "\r=x", None, "é", "", "plain"],
            "c": pd.Categorical(["x", None, "y,z", "x", "x", "x", "x", "x"]),
            "m": [1, "a", 2.5, None, True, math.nan, np.int64(3), "=1"],
        }
    )
    new, old = _both(df)
    _same_csv(new, old)
    # -2.0, as pandas
    assert new.splitlines()[0] == "f,i,n,b,t,c,m" and "\n-2.0," in new.replace("\n0.1", "")


def test_chunks_written_by_several_threads_come_out_in_row_order():
    """Chunks are made into text in parallel (json_rows.in_ranges): the file is the one-chunk file,
    byte for byte, its rows in order."""
    n = 500
    df = pd.DataFrame(
        {"id": np.arange(n), "x": np.arange(n) / 7.0, "t": [f"k{i % 3}" for i in range(n)]}
    )
    one, many = io.BytesIO(), io.BytesIO()
    write_csv(df, one, chunk=n)
    write_csv(df, many, chunk=7)
    assert many.getvalue() == one.getvalue()
    assert pd.read_csv(io.BytesIO(many.getvalue()))["id"].tolist() == list(range(n))


@pytest.mark.parametrize(
    "text_column", [False, True], ids=["every column alike", "with a text column"]
)
def test_columns_the_same_in_every_row_of_a_chunk_are_written_as_pandas_writes_them(text_column):
    df = same_in_some_chunks().assign(**({"t": ["k"] * 12} if text_column else {}))
    out = io.BytesIO()
    write_csv(df, out, chunk=4)
    assert out.getvalue().decode() == df.to_csv(index=False)  # text for text: -0.0 keeps its sign


@pytest.mark.parametrize("chunk", [2, 16384], ids=["chunks of 2 rows", "one chunk"])
def test_formula_like_text_is_defused_in_every_kind_of_column_and_name_and_numbers_are_not(chunk):
    """`safe` defuses each distinct text as it is made into text: Arrow-backed and object text,
    categoricals, mixed cells and column names alike, as defusing the table cell by cell first did;
    numbers, also negative ones and numbers written as text, stay as they are."""
    df = pd.DataFrame(
        {
            "s": pd.array(["=1+1", "b", None, "-x"] * 3, dtype="str"),
            "o": ["@SUM(1)", "-1", "+2e3", "\tcmd"] * 3,
            "c": pd.Categorical(["+cmd|' /C calc'!A0", "k", "k", None] * 3),
            "m": ["=x", 1, True, None] * 3,
            "=name": [-2.5, 1.0, math.nan, -0.0] * 3,
            "n": np.arange(12) - 6,
        }
    )
    out = io.BytesIO()
    write_csv(df, out, chunk=chunk, safe=True)
    new = out.getvalue().decode()
    assert new == _defused_cell_by_cell(df).to_csv(index=False)
    assert new.splitlines()[0] == "s,o,c,m,'=name,n"
    first = next(csv.DictReader(io.StringIO(new)))
    assert (first["s"], first["o"], first["c"], first["m"], first["'=name"]) == (
        "'=1+1",
        "'@SUM(1)",
        "'+cmd|' /C calc'!A0",
        "'=x",
        "-2.5",
    )


@pytest.mark.parametrize(
    "names", [127, 128, 40000], ids=["int8 codes, full", "int16 codes", "int32 codes"]
)
def test_categorical_text_with_missing_cells_reads_back_as_pandas_wrote_it_across_chunks(names):
    """A categorical's text is taken by its own codes, as small an integer as its categories allow:
    a missing cell (code -1) must take the empty text, past the last category, whatever their
    number."""
    labels = [f"k{i}" for i in range(names)]
    cells = [*labels, None, "k0", None]  # every category used, missing cells after the last one
    df = pd.DataFrame(
        {"name": pd.Categorical(cells, categories=labels), "n": np.arange(len(cells))}
    )
    out = io.BytesIO()
    write_csv(df, out, chunk=7)
    assert out.getvalue().decode() == df.to_csv(index=False)


def test_a_column_of_text_in_some_chunks_and_mixed_cells_in_others_reads_back_as_pandas_wrote_it():
    cells = ["a", "b,c", None, "d", 1, True, 2.5, None, "=x", math.nan, "e", "f"]
    df = pd.DataFrame({"m": cells, "n": np.arange(len(cells))})
    out = io.BytesIO()
    write_csv(df, out, chunk=4)
    assert out.getvalue().decode() == df.to_csv(index=False)
