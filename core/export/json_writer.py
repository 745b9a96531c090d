"""A table's rows as strict JSON text, encoded a column at a time by Arrow: `--json` and JSON
exports of 100k-launch reports spent most of their time in per-row Python (`json.dumps` of a dict
per row).

The text reads back (`json.loads`) to exactly what `export.records` gives: null for unknown and
non-finite numbers, floats that round-trip, counts and ids as integers, text as it is."""

from __future__ import annotations

import io
import json
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..table.columns import NOT_WRITTEN
from .cells import json_ready, whole_integers

T = TypeVar("T")
# The rows to make into text, in the order written: a range of the table's rows (a slice, a view of
# its columns), or their positions (a writer taking them in a view's order instead of a sorted copy
# of the table).
Rows = slice | np.ndarray
# A column's cells of those rows as text (an Arrow array, null where missing), or the one text of a
# column the same in every row.
Cells = Callable[[Rows], "pa.Array | str"]
_CHUNK = 8192  # rows encoded at a time (~19 MB of text at 80 columns), by several threads


def write_json_doc(
    meta: dict[str, Any],
    rows: pd.DataFrame,
    out: IO[bytes] | IO[str],
    extra: dict[str, Any] | None = None,
    order: np.ndarray | None = None,
) -> None:
    """`{"meta": META, "rows": [...]}` to `out`, one row per line (strict JSON: no NaN nor
    Infinity); the keys of `extra` after them (`ncu_rules` of a one-row report). `out`: a binary
    stream, or a text one (written through its byte buffer where it has one: 100k rows are ~230 MB,
    not to be decoded and encoded again). `order`: the rows' positions in the order to write them
    (`row_chunks`)."""
    # `nvtx` stands for the stack
    rows = rows.drop(columns=[c for c in NOT_WRITTEN if c in rows.columns])
    write = _byte_writer(out)
    head = json.dumps(json_ready(meta), indent=1, allow_nan=False).replace("\n", "\n ")
    write(('{\n "meta": ' + head + ',\n "rows": [').encode())
    first = True
    for text in row_chunks(rows, order=order):
        write(b"\n  " if first else b",\n  ")
        write(text)
        first = False
    tail = "\n ]" if not first else "]"
    for key, value in (extra or {}).items():
        tail += f",\n {json.dumps(key)}: " + json.dumps(json_ready(value), allow_nan=False)
    write((tail + "\n}\n").encode())


def _byte_writer(out: IO[bytes] | IO[str]) -> Callable[[bytes | memoryview], object]:
    if not isinstance(out, io.TextIOBase):
        return cast(IO[bytes], out).write  # not a text stream: a binary one
    raw: IO[bytes] | None = getattr(out, "buffer", None)
    if raw is None:  # a StringIO (tests capturing stdout)
        return lambda data: out.write(bytes(data).decode("utf-8"))
    out.flush()  # what the text layer holds goes first
    return raw.write


def row_chunks(
    df: pd.DataFrame, chunk: int = _CHUNK, order: np.ndarray | None = None
) -> Iterator[memoryview | bytes]:
    """The rows of `df` as JSON objects in UTF-8, `chunk` rows per piece joined by `,\\n  `, in
    order (`order`: the rows' positions in the order to write them, where not the table's). Chunks
    are encoded on every core (Arrow's kernels let go of the GIL), a few ahead of the one being
    written."""
    df = whole_integers(df)
    keys = [json.dumps({col: 0})[1:-2] for col in df.columns]
    columns = [column_cells(df.iloc[:, k], _values_of, "null") for k in range(len(df.columns))]
    count = len(df) if order is None else len(order)
    yield from in_ranges(
        lambda start, stop: _chunk_text(columns, keys, rows_of(order, start, stop)), count, chunk
    )


def rows_of(order: np.ndarray | None, start: int, stop: int) -> Rows:
    """Rows `start` to `stop` of the output: a slice of the table's, or their positions taken from
    `order`."""
    return slice(start, stop) if order is None else order[start:stop]


def row_count(rows: Rows) -> int:
    return rows.stop - rows.start if isinstance(rows, slice) else len(rows)


def in_ranges(encode: Callable[[int, int], T], rows: int, chunk: int) -> Iterator[T]:
    """`encode(start, stop)` for each `chunk` rows of `rows`, in row order, by a thread per core (up
    to 4), one chunk more in memory than threads: the text of a few chunks, never of the whole
    table."""
    workers = max(1, min(os.cpu_count() or 1, 4))
    with ThreadPoolExecutor(workers) as pool:
        pending: deque[Future[T]] = deque()
        for start in range(0, rows, chunk):
            pending.append(pool.submit(encode, start, min(start + chunk, rows)))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _chunk_text(columns: list[Cells], keys: list[str], rows: Rows) -> memoryview | bytes:
    count = row_count(rows)
    if not keys:
        return ",\n  ".join(["{}"] * count).encode()
    # one join per chunk: `{"a": ` 1, `, "b": ` 2.5, ..., `}` (text pieces are broadcast to every
    # row)
    pieces: list[str | pa.Array] = []
    for k, key in enumerate(keys):
        pieces += [("{" if k == 0 else ", ") + key, columns[k](rows)]
    pieces = merged([*pieces, "},\n  "], "")
    if len(pieces) == 1:  # every column the same in every row
        return (pieces[0] * count).encode()[:-4]
    joined = pc.binary_join_element_wise(
        *pieces, "", null_handling="replace", null_replacement="null"
    )
    return concatenated(joined)[:-4]


def column_cells(col: pd.Series, cells_of: Callable[[pd.Series], Cells], missing: str) -> Cells:
    """`cells_of(col)`, the column's cells as text a range of rows at a time; for a column the same
    in every row, its one text (`missing` where unknown), which `merged` joins with the text pieces
    beside it. Made once for the whole column: what every chunk shares (the column's numbers viewed
    as numpy, its distinct texts) looked at again for each chunk (pandas' indexing, the type's
    checks, factorizing) would be most of a chunk's time, and holds the GIL the writer threads
    share."""
    cells = cells_of(col)
    if same_in_every_row(col):
        # `cells_of` gives Arrow arrays; only this makes one text
        first = cast("pa.Array", cells(slice(0, 1)))
        text = first[0].as_py() or missing
        return lambda rows: text
    return cells


def text_by_code(codes: np.ndarray, texts: list[str | None]) -> Cells:
    """Cells `texts[code]` by each row's code, -1 (missing) taking the last text: taken by Arrow, no
    Python string per row. The last text's index fits the codes' integer type (as pandas chooses a
    categorical's)."""
    table, missing = pa.array(texts, type=pa.string()), len(texts) - 1

    def cells(rows: Rows) -> pa.Array:
        part = codes[rows]
        return table.take(pa.array(np.where(part < 0, missing, part)))

    return cells


def distinct_codes(col: pd.Series) -> tuple[np.ndarray, Iterable[object]] | None:
    """(codes, distinct values) of a text or categorical column (its own codes where categorical: no
    hashing of a million names); None for mixed cells (1 and True hash alike; a dict not at all)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(), col.cat.categories
    if pd.api.types.infer_dtype(col) not in ("string", "empty"):
        return None
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    return (codes.astype(np.int32) if len(uniques) < 2**31 - 1 else codes), uniques


def same_in_every_row(col: pd.Series) -> bool:
    """Whether every cell of `col` holds the same value, bit for bit (NaN as NaN, -0.0 not 0.0): its
    text is then made once, not once a row. Metrics a report lacks are NaN in every row, a GPU's
    name and peaks are one value; the join's cost grows with the columns it joins. Text and mixed
    columns are not looked at."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
    elif isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        codes = col.to_numpy()
        # bits: NaN equals NaN
        codes = codes.view(f"i{dtype.itemsize}") if dtype.kind == "f" else codes
    else:
        return False
    return len(codes) > 0 and bool((codes == codes[0]).all())


def merged(pieces: list[str | pa.Array], sep: str) -> list[str | pa.Array]:
    """`pieces` with each run of texts (the same in every row) joined by `sep` into one."""
    out: list[str | pa.Array] = []
    for piece in pieces:
        if isinstance(piece, str) and out and isinstance(out[-1], str):
            out[-1] += sep + piece
        else:
            out.append(piece)
    return out


def concatenated(text: pa.Array) -> memoryview:
    """A string array's cells end to end, as UTF-8: a view of its data buffer (no copy, no Python
    string)."""
    offsets = np.frombuffer(
        text.buffers()[1], dtype=np.int32, count=len(text) + 1, offset=text.offset * 4
    )
    return memoryview(text.buffers()[2])[offsets[0] : offsets[-1]]


def _values_of(col: pd.Series) -> Cells:
    """Each cell's JSON text; null (`null` once joined) where missing or not finite."""
    kind = col.dtype.kind
    if (
        isinstance(col.dtype, pd.CategoricalDtype)
        or kind in "OSUmMV"
        or pd.api.types.is_string_dtype(col.dtype)
    ):
        return _by_distinct_value(col)
    if kind == "b":
        flags = col.to_numpy()
        return lambda rows: pa.array(np.where(flags[rows], "true", "false"))
    if kind == "f":
        floats = float_values(col)

        def cells(rows: Rows) -> pa.Array:
            values = floats[rows]
            return float_text(np.where(np.isfinite(values), values, np.nan))

        return cells
    if kind in "iu" or pd.api.types.is_integer_dtype(col.dtype):
        return integer_cells(col)
    return _by_distinct_value(col)  # nulls: `null` in the row's join


def float_values(col: pd.Series) -> np.ndarray:
    """A float column as float64, missing as NaN: a view of a numpy column, not a copy."""
    values: np.ndarray = (
        col.to_numpy()
        if col.dtype == np.float64
        else col.to_numpy(dtype=np.float64, na_value=np.nan)
    )
    return values


def integer_cells(col: pd.Series) -> Cells:
    """An integer column's cells as decimal text, null where missing (numpy or nullable Int64: a
    slice of its array is a view)."""
    ints = col.array
    return lambda rows: pc.cast(pa.array(ints[rows], from_pandas=True), pa.string())


def float_text(values: np.ndarray) -> pa.Array:
    """Floats as text that reads back to the same float, null for NaN. A whole value below 1e16
    (counts of FLOPs and bytes: most cells) is written as Python's repr writes it, digits and `.0`,
    from its int64: Arrow writes 1.0 as "1" and 1e15 as "1e+15", and its integer format is much
    faster than its float one. Other values in Arrow's shortest round-trip form ("1e-7",
    "0.000025")."""
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(values) & (values == np.trunc(values))
        # -0.0: int64 drops the -
        small = whole & (np.abs(values) < 1e16) & ~((values == 0) & np.signbit(values))
    if not small.any():
        return _shortest(values, whole)
    digits = pa.array(np.where(small, values, 0).astype(np.int64), mask=~small)
    # null where not small
    ints = pc.binary_join_element_wise(pc.cast(digits, pa.string()), ".0", "")
    # every known value small and whole: NaN the only nulls
    if np.array_equal(small, ~np.isnan(values)):
        return ints
    return pc.if_else(pa.array(small), ints, _shortest(values, whole & ~small))


def _shortest(values: np.ndarray, whole: np.ndarray) -> pa.Array:
    """Arrow's shortest round-trip text; a whole value it writes with no point ("-0") gets its `.0`,
    so it reads back as a float."""
    text = pc.cast(pa.array(values, from_pandas=True), pa.string())
    if not whole.any():
        return text
    plain = pc.and_(pa.array(whole), pc.invert(pc.match_substring(text, "e")))
    return pc.if_else(plain, pc.binary_join_element_wise(text, ".0", ""), text)


def _by_distinct_value(col: pd.Series) -> Cells:
    """Text, categories, mixed objects: each distinct value encoded once by json.dumps (a kernel
    launched 10k times is one name); mixed cells one by one."""
    if (distinct := distinct_codes(col)) is None:
        return lambda rows: pa.array(
            [_dumps(v) for v in col.iloc[rows].astype(object)], type=pa.string()
        )
    codes, uniques = distinct
    return text_by_code(codes, [*(_dumps(u) for u in uniques), "null"])


def _dumps(value: object) -> str:
    return json.dumps(json_ready(value), allow_nan=False)
