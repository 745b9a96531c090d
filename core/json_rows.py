"""A table's rows as strict JSON text, encoded a column at a time by Arrow: `--json` and JSON exports of
100k-launch reports spent most of their time in per-row Python (`json.dumps` of a dict per row).

The text reads back (`json.loads`) to exactly what `export.records` gives: null for unknown and non-finite
numbers, floats that round-trip, counts and ids as integers, text as it is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .export import json_ready, whole_integers

_CHUNK = 16384  # rows encoded at a time: the text of a chunk, not of the whole table, is in memory at once


def write_json_doc(meta: dict, rows: pd.DataFrame, out: IO[str], extra: dict | None = None) -> None:
    """`{"meta": META, "rows": [...]}` to `out`, one row per line (strict JSON: no NaN nor Infinity); the keys
    of `extra` after them (`ncu_rules` of a one-row report)."""
    head = json.dumps(json_ready(meta), indent=1, allow_nan=False).replace("\n", "\n ")
    out.write('{\n "meta": ' + head + ',\n "rows": [')
    first = True
    for text in row_chunks(rows):
        out.write(("\n  " if first else ",\n  ") + text)
        first = False
    out.write("\n ]" if not first else "]")
    for key, value in (extra or {}).items():
        out.write(f",\n {json.dumps(key)}: " + json.dumps(json_ready(value), allow_nan=False))
    out.write("\n}\n")


def row_chunks(df: pd.DataFrame, chunk: int = _CHUNK) -> Iterator[str]:
    """The rows of `df` as JSON objects, `chunk` rows per piece joined by `,\\n  `."""
    df = whole_integers(df)
    keys = [json.dumps({col: 0})[1:-2] for col in df.columns]
    for start in range(0, len(df), chunk):
        part = df.iloc[start : start + chunk]
        if not keys:
            yield ",\n  ".join(["{}"] * len(part))
            continue
        # one join per chunk: `{"a": ` 1, `, "b": ` 2.5, ..., `}` (text pieces are broadcast to every row)
        pieces = []
        for k, key in enumerate(keys):
            pieces += [("{" if k == 0 else ", ") + key, _values(part.iloc[:, k])]
        yield concatenated(pc.binary_join_element_wise(*pieces, "},\n  ", ""))[:-4]


def concatenated(text: pa.Array) -> str:
    """A string array's cells end to end: its data buffer as it is (no Python string per row)."""
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int32, count=len(text) + 1, offset=text.offset * 4)
    return text.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]].decode("utf-8")


def _values(col: pd.Series) -> pa.Array:
    """Each cell's JSON text, `null` where missing or not finite."""
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
    return pc.fill_null(text, "null")


def float_text(values: np.ndarray) -> pa.Array:
    """Floats as the shortest text that reads back to the same float, null for NaN; a whole value keeps its
    `.0` (Arrow writes 1.0 as "1"), so a float stays a float when read back, as Python's repr writes it."""
    text = pc.cast(pa.array(values, from_pandas=True), pa.string())
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(values) & (values == np.trunc(values))  # written with no point: "7", or "1e+16"
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
