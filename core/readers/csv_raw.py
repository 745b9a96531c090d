"""`ncu --csv --page raw`: a header of metric names, a units row, one row per launch.

Large pages are parsed straight from the file by pandas' C parser with typed columns, so a million
launches never exist as Python strings; cells the fast path cannot type (odd text) fall back to a
cell-by-cell parse."""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError
from ..common.units import metric_unit_factor, parse_number
from ..common.utf8_repair import Utf8Repaired
from .csv_text import IDENTITY_HEADERS, CsvText, nvtx_columns, nvtx_text, process_label
from .progress_file import ByteProgress, ProgressFile, counted
from .result import MetricTable
from .wanted import IDENTITY, MODIFIER_METRIC, OPCODE_METRIC, wanted

if TYPE_CHECKING:
    import pyarrow as pa

_INSTANCED = (OPCODE_METRIC, MODIFIER_METRIC)
_TEXT_HEADERS = {*IDENTITY_HEADERS, "Process ID", "Process Name", *_INSTANCED}
# The cells pandas' reader takes as missing (its defaults and ncu's `n/a`): the Arrow reader takes
# the same.
_NA_TEXT = {
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
}
_INSTANCE = re.compile(r"([A-Z0-9_.]+): ([0-9][0-9,.]*)")


def read_raw(doc: CsvText, progress: ByteProgress | None = None) -> MetricTable:
    """The page's launches (identity and metrics in SI units); `progress` told the bytes read
    (progress_file.py)."""
    header = doc.header
    nv = nvtx_columns(header)
    keep = sorted({k for k, h in enumerate(header) if h in _TEXT_HEADERS or wanted(h)} | set(nv))
    numeric = [
        k
        for k in keep
        if wanted(header[k]) and header[k] not in ("device__attribute_display_name", *_INSTANCED)
    ]
    with doc.path.open("rb") as handle:
        handle.seek(doc.data_offset)
        units = _units_row(handle, len(header))
        if _nothing_left(handle):  # a header (and units) alone: the caller says "no kernel rows"
            return MetricTable(pd.DataFrame(), {"format": "csv-raw"})
        at = handle.tell()
        # Straight from disk by Arrow's reader (several times faster than pandas' C parser): the
        # metrics whose first cell is a plain number typed as float64 by Arrow, the others
        # (instanced cells `128 (0: 128)`, flopscope's own import arguments; thousands separators)
        # as text whose distinct cells are parsed once. A later row that breaks the first row's
        # pattern: every metric as text; rows Arrow cannot read at all (the wrong width) go to
        # pandas below.
        typed = _plain_in_first_row(handle, numeric, len(header))
        frame = None
        for floats in dict.fromkeys((frozenset(typed), frozenset())):
            handle.seek(at)
            if (
                frame := _parse_arrow_text(counted(handle, progress), header, keep, numeric, floats)
            ) is not None:
                break
        try:
            # Straight from disk, typed; ncu's own `==` lines between rows land as rows with an `==`
            # ID.
            if frame is None:
                handle.seek(at)
                frame = _parse(
                    counted(handle, progress), header, keep, {k: np.float64 for k in numeric}
                )
        # a cell the typed parser refused: without ncu's lines, parse cell by cell
        except ValueError:
            source = io.BytesIO(doc.body_bytes())
            _units_row(source, len(header))
            frame = _parse(source, header, keep, {})
            for k in numeric:
                frame[k] = _numeric(frame[k])
    frame = _without_prof_rows(frame, keep[0] if keep and keep[0] == 0 else None)
    # The columns gathered first, then made one frame: a full set's hundreds of metrics, inserted
    # one at a time, fragment the frame (pandas warns, and every later column op pays for it).
    columns: dict[str, pd.Series] = {}
    for k in keep:
        name = header[k]
        if name in IDENTITY_HEADERS:
            columns[IDENTITY_HEADERS[name]] = frame[k]  # categorical: repeated text stored once
        elif name == "device__attribute_display_name":
            columns["gpu"] = frame[k]
        elif k in numeric:
            values = frame[k].astype(np.float64) * metric_unit_factor(name, units[k])
            if name in columns:
                ids = frame[keep[0]] if keep and keep[0] == 0 else None
                _refuse_conflict(doc, name, columns[name], values, ids)
            columns[name] = values
    out = pd.DataFrame(columns, index=frame.index)
    out["process"] = _process(frame, header)
    out["nvtx"] = _nvtx(frame, header, nv)
    for name in _INSTANCED:
        if name in header:
            out = out.join(_per_opcode(frame[header.index(name)], name))
    for col in IDENTITY:
        if col not in out:
            out[col] = None
    return MetricTable(out, {"format": "csv-raw"})


def _refuse_conflict(
    doc: CsvText, name: str, first: pd.Series, second: pd.Series, ids: pd.Series | None
) -> None:
    """A metric column printed twice must hold one value per launch (within ncu's rounding to its
    unit): a duplicated column that disagrees is a damaged or edited file, and taking either would
    be a guess."""
    a, b = first.to_numpy(dtype=float), second.to_numpy(dtype=float)
    same = np.isclose(a, b, rtol=0.01, atol=0.0, equal_nan=True)
    if same.all():
        return
    at = int(np.argmin(same))
    launch = f"launch {ids.iloc[at]}" if ids is not None else f"row {at + 1}"
    raise FlopscopeError(
        doc.path,
        f"{launch}: the column {name} appears twice with different values ({a[at]:g} and {b[at]:g}"
        " in SI units)",
        "re-export it with `ncu --import REPORT --csv --page raw`, or remove the wrong column",
    )


def _nothing_left(handle: BinaryIO, window: int = 1 << 16) -> bool:
    """Whether only blank space follows (checked within a window, then the position is restored)."""
    at = handle.tell()
    rest = handle.read(window)
    handle.seek(at)
    return len(rest) < window and not rest.strip()


def _per_opcode(cells: pd.Series, name: str) -> pd.DataFrame:
    """`N (IMAD: a; FFMA: b; ...)` cells (`--print-metric-instances details`) as a column per
    opcode, named as the .ncu-rep reader names them; a bare total (no instances printed) gives no
    columns."""
    # launches of one kernel repeat one cell: parse each distinct cell once
    cells = cells.astype("category")
    parsed = pd.DataFrame(
        [
            {f"{name}:{op}": float(n.replace(",", "")) for op, n in _INSTANCE.findall(c)}
            for c in cells.cat.categories.astype(str)
        ]
    )
    if parsed.empty or not len(parsed.columns):
        return pd.DataFrame(index=cells.index)
    codes = cells.cat.codes.to_numpy()
    # code -1 (empty cell): a row of NaN
    out = parsed.reindex(np.where(codes < 0, len(parsed), codes))
    out.index = cells.index
    return out


def _without_prof_rows(frame: pd.DataFrame, id_col: int | None) -> pd.DataFrame:
    """Only the launches, their IDs as numbers (int64, float64 where one is missing), as the Arrow
    path reads them: every row of ncu's table has a launch number as its ID. ncu's own `==` lines
    between rows, and what the program printed after the table (`Done.`), land as rows with other
    IDs."""
    # numbers: all launches
    if id_col is None or frame.empty or pd.api.types.is_numeric_dtype(frame[id_col]):
        return frame
    # each distinct ID looked at once: 100k launches, vectorised
    ids = frame[id_col].astype("category")
    labels = pd.Index(ids.cat.categories.astype(str)).str.strip()
    launch = np.asarray(labels.str.fullmatch(r"[0-9]+"), dtype=bool)
    number = np.array(
        [int(t) if ok else -1 for t, ok in zip(labels, launch, strict=True)] + [-1], dtype=np.int64
    )
    codes = ids.cat.codes.to_numpy()
    keep = (codes < 0) | np.append(launch, False)[codes]
    frame = frame[keep].reset_index(drop=True)
    codes = codes[keep]
    values = number[codes]
    frame[id_col] = values if (codes >= 0).all() else np.where(codes >= 0, values, np.nan)
    return frame


def _parse_arrow(
    handle: BinaryIO | ProgressFile, header: list[str], keep: list[int], numeric: set[int]
) -> pd.DataFrame:
    """The rows as `_parse` reads them, by pyarrow's CSV reader: metrics as float64, text as
    categories, the same cells missing. ncu's own `==` lines between rows are skipped; any other row
    of the wrong width, and any cell that is not what its column holds, raises
    (pyarrow.ArrowInvalid), for pandas to read."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = [str(k) for k in range(len(header))]
    convert = pacsv.ConvertOptions(
        include_columns=[names[k] for k in keep],
        column_types={names[k]: pa.float64() if k in numeric else pa.string() for k in keep},
        null_values=sorted(_NA_TEXT),
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )

    def read(newlines_in_values: bool) -> pa.Table:
        parse = pacsv.ParseOptions(
            newlines_in_values=newlines_in_values,
            invalid_row_handler=lambda row: "skip" if row.text.startswith("==") else "error",
        )
        options = pacsv.ReadOptions(column_names=names)
        # Odd bytes in a row of the wrong width: replaced, not pyarrow's "Exception ignored" on
        # stderr.
        source = Utf8Repaired(handle)
        return pacsv.read_csv(
            source, read_options=options, parse_options=parse, convert_options=convert
        )

    at = handle.tell()
    try:
        # One row per line, as ncu writes them: Arrow then cuts the file at line ends and parses the
        # pieces on every core (line breaks allowed inside values slow its threaded read). A cell
        # holding a line break would leave two short rows, each an error (the first starts with the
        # launch's ID, never `==`): read again, quoted line breaks allowed.
        table = read(newlines_in_values=False)
    except pa.ArrowInvalid:
        handle.seek(at)
        table = read(newlines_in_values=True)
    # Column by column, no whole-table to_pandas: it would make each text column a categorical of
    # unsorted, per-block dictionaries, only for them to be merged and sorted again. On every core:
    # Arrow's hashing of the text columns and its joining of each column's blocks let go of the
    # GIL.
    columns = {int(name): table.column(name) for name in table.column_names}
    with ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, 4))) as pool:
        converted = list(
            pool.map(
                lambda kc: _launch_ids(kc[1]) if kc[0] == 0 else _column(kc[1]), columns.items()
            )
        )
    frame = pd.DataFrame(dict(zip(columns, converted, strict=True)), copy=False)
    del table, columns, converted
    # Arrow's allocator keeps the pages of the parse (the table, the blocks read) for reuse: memory
    # as large as the parse that nothing uses any more, held while pandas copies the columns into SI
    # units next.
    pa.default_memory_pool().release_unused()
    return frame


def _launch_ids(col: pa.ChunkedArray) -> np.ndarray | pd.Categorical:
    """The ID column: launch numbers as numbers where every cell is one (a category per launch would
    hash and sort 100k strings for nothing), else as `_column` gives it, for `_without_prof_rows` to
    drop the others."""
    import pyarrow as pa

    try:
        return col.cast(pa.int64()).to_numpy()  # missing IDs: NaN (float64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _column(col)


def _parse_arrow_text(
    handle: BinaryIO | ProgressFile,
    header: list[str],
    keep: list[int],
    numeric: list[int],
    floats: frozenset[int],
) -> pd.DataFrame | None:
    """`_parse_arrow` with the metrics of `floats` typed by Arrow and the other `numeric` ones read
    as text and parsed by `_numeric`; None where Arrow cannot read the rows or a cell is not what
    its column holds."""
    try:
        frame = _parse_arrow(handle, header, keep, set(floats))
    except (ValueError, OSError):  # pyarrow.ArrowInvalid is a ValueError
        return None
    for k in numeric:
        if k not in floats:
            frame[k] = _numeric(frame[k])
    return frame


def _plain_in_first_row(handle: BinaryIO, numeric: list[int], width: int) -> set[int]:
    """The metric columns whose cell in the next row is a plain number (or missing); the position is
    kept."""
    at = handle.tell()
    line = handle.readline()
    handle.seek(at)
    cells = next(csv.reader([line.decode("utf-8", errors="replace")]), [])
    if len(cells) != width:  # a cell spanning lines, or no row: no guess
        return set(numeric)
    return {k for k in numeric if cells[k].strip() in _NA_TEXT or _PLAIN_RE.match(cells[k].strip())}


def _column(col: pa.ChunkedArray) -> np.ndarray | pd.Categorical:
    """One Arrow column as pandas holds it: numbers as float64 (missing as NaN), text as a
    categorical whose categories are sorted, as pandas makes them (group order follows them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_string(col.type):
        return col.to_numpy()
    # One hash pass (a dictionary shared by every block), then the few distinct labels sorted.
    encoded = col.dictionary_encode().unify_dictionaries()
    labels = encoded.chunk(0).dictionary if encoded.num_chunks else pa.array([], pa.string())
    order = pc.array_sort_indices(labels).to_numpy()
    rank = np.empty(len(order) + 1, dtype=np.int64)
    # a missing cell's index (filled as -1) stays -1
    rank[order], rank[-1] = np.arange(len(order)), -1
    indices = pc.fill_null(
        pa.chunked_array([c.indices for c in encoded.chunks], pa.int32()), -1
    ).to_numpy()
    return pd.Categorical.from_codes(
        rank[indices], categories=pd.Index(labels.take(order).to_pandas()), validate=False
    )


def _parse(
    source: BinaryIO | ProgressFile,
    header: list[str],
    keep: list[int],
    numeric: dict[int, type[np.float64]],
) -> pd.DataFrame:
    dtype = {k: numeric.get(k, "category") for k in keep}
    return pd.read_csv(
        source,
        header=None,
        names=range(len(header)),
        usecols=keep,
        dtype=dtype,
        na_values=["n/a"],
        thousands=",",
        engine="c",
        on_bad_lines="skip",
        encoding="utf-8",
        encoding_errors="replace",
    )


def _units_row(source: BinaryIO, width: int) -> list[str]:
    """ncu prints a units row right after the header; its first cell (the ID) is empty."""
    start = source.tell()
    line = source.readline()
    if not line.startswith(b'"",'):
        source.seek(start)
        return [""] * width
    units = next(csv.reader([line.decode("utf-8", errors="replace")]))
    return units + [""] * (width - len(units))


# A plain number as ncu prints it (thousands separators already removed), and an instanced cell
# (`--print-metric-instances details`): the total, then its instances in parentheses, `128 (0:
# 128)`.
_PLAIN = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"
_INSTANCES = r"^(\S+) \(.*\)$"
_PLAIN_RE = re.compile(_PLAIN)


def _numeric(col: pd.Series) -> pd.Series:
    """Text cells as numbers: each distinct cell once, by Arrow, an instanced cell as its total.
    Cells that are no plain number (`n/a`, odd text) are left to `parse_number`, once per distinct
    value."""
    col = col if isinstance(col.dtype, pd.CategoricalDtype) else col.astype("category")
    cells = col.cat.categories.astype(str).to_numpy(dtype=object)
    return (
        pd.Series(_numbers(cells), dtype=np.float64)
        .reindex(col.cat.codes.to_numpy())
        .set_axis(col.index)
    )


def _numbers(cells: np.ndarray) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.utf8_trim_whitespace(pa.array(cells, type=pa.string()))
    text = pc.replace_substring_regex(text, _INSTANCES, r"\1")
    text = pc.replace_substring(text, ",", "")
    plain = pc.match_substring_regex(text, _PLAIN).to_numpy(zero_copy_only=False)
    numbers = pc.cast(pc.if_else(pa.array(plain), text, pa.scalar(None, pa.string())), pa.float64())
    out: np.ndarray = numbers.to_numpy(zero_copy_only=False).astype(np.float64)
    for k in np.flatnonzero(~plain):
        out[k] = parse_number(cells[k])
    return out


def _process(frame: pd.DataFrame, header: list[str]) -> pd.Series | None:
    if "Process Name" not in header and "Process ID" not in header:
        return None
    cols = [frame[header.index(t)] if t in header else None for t in ("Process Name", "Process ID")]
    return _per_distinct(frame.index, cols, lambda name, pid: process_label(name, pid))


def _per_distinct(
    index: pd.Index, cols: list[pd.Series | None], label: Callable[..., str | None]
) -> pd.Series:
    """`label(*cells)` of each row, computed once per distinct combination of cells (a million
    launches of a few processes or ranges: a few calls, not a million), then spread by the
    combination's codes."""
    codes: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for col in cols:
        cats = pd.Categorical(col) if col is not None else pd.Categorical([None] * len(index))
        codes.append(cats.codes.astype(np.int64) + 1)  # 0: missing
        values.append(np.concatenate([[None], cats.categories.to_numpy(dtype=object)]))
    combined = np.zeros(len(index), dtype=np.int64)
    for c, v in zip(codes, values, strict=True):
        # renumbered each step: stays below the row count
        combined = pd.factorize(combined * len(v) + c)[0]
    _, first, at = np.unique(combined, return_index=True, return_inverse=True)
    labels = np.empty(len(first), dtype=object)  # object, not numpy's fixed-width text
    labels[:] = [label(*(v[c[i]] for c, v in zip(codes, values, strict=True))) for i in first]
    return pd.Series(labels[at.reshape(-1)], index=index, dtype=object)


def _nvtx(frame: pd.DataFrame, header: list[str], nv: list[int]) -> list[str | None] | None:
    if not nv:
        return None

    def label(*cells: str | None) -> str | None:
        return nvtx_text(header, nv, cells)

    labels: list[str | None] = _per_distinct(frame.index, [frame[k] for k in nv], label).tolist()
    return labels
