"""A table's rows as strict JSON text, encoded a column at a time by Arrow: `--json` and JSON exports of
100k-launch reports spent most of their time in per-row Python (`json.dumps` of a dict per row).

The text reads back (`json.loads`) to exactly what `export.records` gives: null for unknown and non-finite
numbers, floats that round-trip, counts and ids as integers, text as it is."""

from __future__ import annotations

import io
import json
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .export import json_ready, whole_integers

T = TypeVar("T")
_CHUNK = 8192  # rows encoded at a time (~19 MB of text at 80 columns), by several threads


def write_json_doc(meta: dict, rows: pd.DataFrame, out: IO[bytes] | IO[str], extra: dict | None = None) -> None:
    """`{"meta": META, "rows": [...]}` to `out`, one row per line (strict JSON: no NaN nor Infinity); the keys
    of `extra` after them (`ncu_rules` of a one-row report). `out`: a binary stream, or a text one (written
    through its byte buffer where it has one: 100k rows are ~230 MB, not to be decoded and encoded again)."""
    write = _byte_writer(out)
    head = json.dumps(json_ready(meta), indent=1, allow_nan=False).replace("\n", "\n ")
    write(('{\n "meta": ' + head + ',\n "rows": [').encode())
    first = True
    for text in row_chunks(rows):
        write(b"\n  " if first else b",\n  ")
        write(text)
        first = False
    tail = "\n ]" if not first else "]"
    for key, value in (extra or {}).items():
        tail += f",\n {json.dumps(key)}: " + json.dumps(json_ready(value), allow_nan=False)
    write((tail + "\n}\n").encode())


def _byte_writer(out: IO[bytes] | IO[str]) -> Callable[[bytes | memoryview], object]:
    if not isinstance(out, io.TextIOBase):
        return out.write
    raw = getattr(out, "buffer", None)
    if raw is None:  # a StringIO (tests capturing stdout)
        return lambda data: out.write(bytes(data).decode("utf-8"))
    out.flush()  # what the text layer holds goes first
    return raw.write


def row_chunks(df: pd.DataFrame, chunk: int = _CHUNK) -> Iterator[memoryview | bytes]:
    """The rows of `df` as JSON objects in UTF-8, `chunk` rows per piece joined by `,\\n  `, in order. Chunks
    are encoded on every core (Arrow's kernels let go of the GIL), a few ahead of the one being written."""
    df = whole_integers(df)
    keys = [json.dumps({col: 0})[1:-2] for col in df.columns]
    yield from in_order(lambda part: _chunk_text(part, keys), df, chunk)


def in_order(encode: Callable[[pd.DataFrame], T], df: pd.DataFrame, chunk: int) -> Iterator[T]:
    """`encode(part)` for each `chunk` rows of `df`, in row order, as `in_ranges` runs them."""
    return in_ranges(lambda start, stop: encode(df.iloc[start:stop]), len(df), chunk)


def in_ranges(encode: Callable[[int, int], T], rows: int, chunk: int) -> Iterator[T]:
    """`encode(start, stop)` for each `chunk` rows of `rows`, in row order, by a thread per core (up to 4), one
    chunk more in memory than threads: the text of a few chunks, never of the whole table."""
    workers = max(1, min(os.cpu_count() or 1, 4))
    with ThreadPoolExecutor(workers) as pool:
        pending: deque = deque()
        for start in range(0, rows, chunk):
            pending.append(pool.submit(encode, start, min(start + chunk, rows)))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _chunk_text(part: pd.DataFrame, keys: list[str]) -> memoryview | bytes:
    if not keys:
        return ",\n  ".join(["{}"] * len(part)).encode()
    # one join per chunk: `{"a": ` 1, `, "b": ` 2.5, ..., `}` (text pieces are broadcast to every row)
    pieces: list[str | pa.Array] = []
    for k, key in enumerate(keys):
        pieces += [("{" if k == 0 else ", ") + key, column_text(part.iloc[:, k], _values, "null")]
    pieces = merged([*pieces, "},\n  "], "")
    if len(pieces) == 1:  # every column the same in every row
        return (pieces[0] * len(part)).encode()[:-4]
    joined = pc.binary_join_element_wise(*pieces, "", null_handling="replace", null_replacement="null")
    return concatenated(joined)[:-4]


def column_text(col: pd.Series, encode: Callable[[pd.Series], pa.Array], missing: str) -> pa.Array | str:
    """`encode(col)`, each cell's text; for a column the same in every row, its one text (`missing` where
    unknown), which `merged` joins with the text pieces beside it."""
    if same_in_every_row(col):
        return encode(col.iloc[:1])[0].as_py() or missing
    return encode(col)


def same_in_every_row(col: pd.Series) -> bool:
    """Whether every cell of `col` holds the same value, bit for bit (NaN as NaN, -0.0 not 0.0): its text is then
    made once, not once a row. Metrics a report lacks are NaN in every row, a GPU's name and peaks are one value;
    the join's cost grows with the columns it joins. Text and mixed columns are not looked at."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
    elif isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        codes = col.to_numpy()
        codes = codes.view(f"i{dtype.itemsize}") if dtype.kind == "f" else codes  # bits: NaN equals NaN
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
    """A string array's cells end to end, as UTF-8: a view of its data buffer (no copy, no Python string)."""
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int32, count=len(text) + 1, offset=text.offset * 4)
    return memoryview(text.buffers()[2])[offsets[0] : offsets[-1]]


def _values(col: pd.Series) -> pa.Array:
    """Each cell's JSON text; null (`null` once joined) where missing or not finite."""
    kind = col.dtype.kind
    if isinstance(col.dtype, pd.CategoricalDtype) or kind in "OSUmMV" or pd.api.types.is_string_dtype(col.dtype):
        return _by_distinct_value(col)
    if kind == "b":
        text = pa.array(np.where(col.to_numpy(), "true", "false"))
    elif kind == "f":
        values = col.to_numpy(dtype=np.float64, na_value=np.nan)
        text = float_text(np.where(np.isfinite(values), values, np.nan))
    elif kind in "iu" or pd.api.types.is_integer_dtype(col.dtype):  # numpy or nullable Int64
        text = pc.cast(pa.array(col, from_pandas=True), pa.string())
    else:
        return _by_distinct_value(col)
    return text  # nulls: `null` in the row's join


def float_text(values: np.ndarray) -> pa.Array:
    """Floats as text that reads back to the same float, null for NaN. A whole value below 1e16 (counts of
    FLOPs and bytes: most cells) is written as Python's repr writes it, digits and `.0`, from its int64: Arrow
    writes 1.0 as "1" and 1e15 as "1e+15", and its integer format is several times faster than its float one.
    Other values in Arrow's shortest round-trip form ("1e-7", "0.000025")."""
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(values) & (values == np.trunc(values))
        small = whole & (np.abs(values) < 1e16) & ~((values == 0) & np.signbit(values))  # -0.0: int64 drops the -
    if not small.any():
        return _shortest(values, whole)
    digits = pa.array(np.where(small, values, 0).astype(np.int64), mask=~small)
    ints = pc.binary_join_element_wise(pc.cast(digits, pa.string()), ".0", "")  # null where not small
    if np.array_equal(small, ~np.isnan(values)):  # every known value small and whole: NaN the only nulls
        return ints
    return pc.if_else(pa.array(small), ints, _shortest(values, whole & ~small))


def _shortest(values: np.ndarray, whole: np.ndarray) -> pa.Array:
    """Arrow's shortest round-trip text; a whole value it writes with no point ("-0") gets its `.0`, so it
    reads back as a float."""
    text = pc.cast(pa.array(values, from_pandas=True), pa.string())
    if not whole.any():
        return text
    plain = pc.and_(pa.array(whole), pc.invert(pc.match_substring(text, "e")))
    return pc.if_else(plain, pc.binary_join_element_wise(text, ".0", ""), text)


def _by_distinct_value(col: pd.Series) -> pa.Array:
    """Text, categories, mixed objects: each distinct value encoded once by json.dumps (a kernel launched 10k
    times is one name); mixed cells (1 and True hash alike; a dict not at all) one by one."""
    if not isinstance(col.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(col) not in ("string", "empty"):
        return pa.array([_dumps(v) for v in col.astype(object)], type=pa.string())
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    return by_code(codes, [*(_dumps(u) for u in uniques), "null"])


def by_code(codes: np.ndarray, texts: list[str | None]) -> pa.Array:
    """`texts[code]` for each code, -1 (missing) taking the last text: taken by Arrow, no Python string per row."""
    return pa.array(texts, type=pa.string()).take(pa.array(np.where(codes < 0, len(texts) - 1, codes)))


def _dumps(value: object) -> str:
    return json.dumps(json_ready(value), allow_nan=False)
