"""A cache of the tables read from report files, so a second open of a big report costs a Parquet
read.

Three kinds of entry per report: its metric table as the readers made it (readers/__init__.py; an
.ncu-rep's only, as a CSV parses about as fast), the finished report, counted and derived, for each
`--gpu` it was opened with (report/cache.py), and that report's groupings (report/group_cache.py,
named after the finished report's entry). One Parquet file per entry under `<data home>/cache/`,
named by a hash of what identifies the report as read: its resolved path, size, modification time
and inode, the entry's kind, flopscope's version and a digest of the code that made it. A report
changed in place gets a new name; the old entry ages out.

Safe without locks: an entry is written to a temporary file beside it and renamed into place (atomic
on POSIX), so a reader sees a whole entry or none, and a killed writer leaves only a `.tmp-*` file,
removed by the next eviction. An entry that cannot be read is ignored and rewritten. The cache never
fails a read: a read-only or full disk only means no entry. `FLOPSCOPE_NO_CACHE=1` (the CLI's
`--no-cache`) bypasses it; `FLOPSCOPE_CACHE_MAX_BYTES` caps its size (default 4 GB), oldest entries
evicted first."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import __version__
from ..common.home import NO_CACHE_ENV as NO_CACHE_ENV  # the tests' name for it
from ..common.home import caches_enabled

MAX_BYTES_ENV = "FLOPSCOPE_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 4 << 30
MIN_REPORT_BYTES = 1 << 20  # smaller reports read faster than a Parquet file opens
_META_KEY = b"flopscope.reader_meta"
_STALE_TMP_SECONDS = 3600
_SEAL_BYTES = 32  # a sealed entry's SHA-256, after its Parquet bytes
_POOL_SWITCH = threading.Lock()  # held while Arrow allocates on malloc (_malloc_for_arrow)


enabled = caches_enabled


def cache_folder() -> Path | None:
    from ..common.home import data_home

    try:
        folder = data_home() / "cache"
        folder.mkdir(exist_ok=True)
    except Exception:  # OSError, or FlopscopeError from data_home: no cache, and the read goes on
        return None
    return folder


_CORE = Path(__file__).parents[1]  # core/: this module is core/readers/table_cache.py


@functools.cache
def readers_code() -> str:
    """A digest of the code that makes a cached metric table (the readers and the metric vocabulary
    they keep): a table read by other code, an older flopscope or a working copy being edited, is
    never handed back."""
    return _digest(reader_sources())


def reader_sources() -> list[Path]:
    return [
        *(_CORE / "readers").glob("*.py"),
        _CORE / "ncu" / "metrics.py",
        _CORE / "common" / "units.py",
    ]


@functools.cache
def engine_code() -> str:
    """A digest of all of core/, its GPU datasheets included: what counts and derives a finished
    report."""
    return _digest(
        [p for p in _CORE.rglob("*") if p.suffix in (".py", ".csv", ".txt") and p.is_file()]
    )


def _digest(sources: list[Path]) -> str:
    digest = hashlib.sha256()
    for source in sorted(sources):
        digest.update(str(source.relative_to(_CORE)).encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def entry_for(path: Path, *kind: object, code: str | None = None) -> Path | None:
    """Where the table of `path` is (or would be) cached: its metric table, or with `kind` another
    entry of it (`"report", gpu`) made by `code`. None when it is not worth caching or cannot be."""
    try:
        info = path.stat()
    except OSError:
        return None
    if info.st_size < MIN_REPORT_BYTES or not enabled():
        return None
    folder = cache_folder()
    if folder is None:
        return None
    from .ncu_rep import READER_ENV

    made_by = code if code is not None else readers_code()
    # a table ncu_report read is not one the streaming reader read
    reader = os.environ.get(READER_ENV, "")
    key = [
        str(path.resolve()),
        info.st_size,
        info.st_mtime_ns,
        info.st_ino,
        __version__,
        made_by,
        reader,
        *kind,
    ]
    return folder / f"{hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]}.parquet"


def load(entry: Path, sealed: bool = False) -> tuple[pd.DataFrame, dict[str, Any]] | None:
    """The cached (table, the JSON object stored with it: a reader's meta, or a finished report's),
    or None when there is no usable entry. An entry carries its own name (its key's digest): a file
    copied or moved over another entry's name is not that report's table. `sealed`: an entry saved
    so, read only if its every byte is as written."""
    try:
        with _malloc_for_arrow():
            table, stored = _read(entry, sealed)
            if stored.get("entry") != entry.name:
                return None
            frame = _objects_again(
                table.to_pandas(), stored["object_columns"], stored.get("object_categories", [])
            )
    # absent, or damaged by something other than this module: read the report instead
    except Exception:
        return None
    os.utime(entry)  # most recently used, for eviction
    return frame, stored["reader_meta"]


@contextlib.contextmanager
def _malloc_for_arrow() -> Iterator[None]:
    """Arrow's allocations on the C library's malloc while an entry is read and converted. Arrow's
    own allocator (mimalloc) asks the kernel for transparent huge pages, and on a machine whose
    memory is fragmented each of their faults may wait for the kernel to compact memory: the
    system time of reading a big entry then varied several-fold from one run to the next, where
    malloc's pages cost the same each time. Each buffer is freed by the pool that made it. One read
    at a time (the app reads in worker threads): two would restore each other's pool."""
    import pyarrow as pa

    with _POOL_SWITCH:
        before = pa.default_memory_pool()
        pa.set_memory_pool(pa.system_memory_pool())
        try:
            yield
        finally:
            pa.set_memory_pool(before)


def _read(entry: Path, sealed: bool) -> tuple[Any, dict[str, Any]]:
    """(the entry's Arrow table, what save stored with it). Text columns come as dictionaries, each
    distinct value decoded once: a 100k-launch table's names and NVTX labels hold a few hundred
    values, and decoding each launch's copy was most of a read's time and memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = _unsealed(entry) if sealed else None
    with pq.ParquetFile(entry if data is None else pa.BufferReader(data)) as file:
        schema, metadata = file.schema_arrow, file.metadata
    stored = json.loads(schema.metadata[_META_KEY])
    text = [
        name
        for name in stored["object_columns"]
        if pa.types.is_string(schema.field(name).type)
        or pa.types.is_large_string(schema.field(name).type)
    ]
    source = entry if data is None else pa.BufferReader(data)
    with pq.ParquetFile(source, metadata=metadata, read_dictionary=text) as file:
        return file.read(), stored


def _unsealed(entry: Path) -> Any:
    """A sealed entry's Parquet bytes (a pyarrow buffer); ValueError where any byte differs from
    what was written: a damaged number, name or type is never read."""
    import pyarrow as pa

    data = memoryview(entry.read_bytes())
    body, seal = data[:-_SEAL_BYTES], data[-_SEAL_BYTES:]
    if len(data) <= _SEAL_BYTES or hashlib.sha256(body).digest() != seal:
        raise ValueError(f"{entry}: not as written")
    return pa.py_buffer(body)


def _objects_again(frame: pd.DataFrame, names: list[str], categorical: list[str]) -> pd.DataFrame:
    """Text columns as the readers make them (object, None where missing), and categorical names
    with object categories: Arrow hands back pandas' string dtype, with NaN for missing, which later
    steps compare and serialise differently."""
    for name in names:
        column = frame[name]
        values = (
            _objects_of(column)
            if isinstance(column.dtype, pd.CategoricalDtype)
            else column.to_numpy(dtype=object, na_value=None)
        )
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    for name in categorical:
        # every value missing: Arrow kept no dictionary
        if not isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = pd.Categorical([None] * len(frame), categories=pd.Index([], dtype=object))
            continue
        column = frame[name].cat
        categories = pd.Index(column.categories.to_numpy(dtype=object), dtype=object)
        frame[name] = pd.Categorical.from_codes(
            column.codes, categories=categories, ordered=column.ordered
        )
    return frame


def _objects_of(column: pd.Series) -> Any:
    """A text column read as a dictionary, as objects: each launch's value the one str of its
    category, None where missing (code -1: the last of the values)."""
    categories = column.cat.categories.to_numpy(dtype=object)
    values = np.empty(len(categories) + 1, dtype=object)
    values[:-1] = categories
    values[-1] = None
    return values.take(column.cat.codes.to_numpy())


def _object_categories(frame: pd.DataFrame) -> list[str]:
    return [
        c
        for c in frame.columns
        if isinstance(frame[c].dtype, pd.CategoricalDtype)
        and frame[c].cat.categories.dtype == object
    ]


def text_only(column: pd.Series) -> bool:
    """Whether an object column holds text and None alone, as an entry hands it back: Arrow keeps
    no other missing value, and no number beside text."""
    if pd.api.types.infer_dtype(column, skipna=True) not in ("string", "empty"):
        return False
    return all(v is None for v in column[column.isna()])


def save(entry: Path, frame: pd.DataFrame, meta: Mapping[str, Any], sealed: bool = False) -> bool:
    """Store (table, its meta: a JSON object) atomically; on any failure leave no entry (False).
    `sealed`: the Parquet bytes followed by their SHA-256, for `load(sealed=True)` (small tables:
    the digest is taken over the whole file at each read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        stored = {
            "entry": entry.name,
            "reader_meta": meta,
            "object_columns": [c for c in frame.columns if frame[c].dtype == object],
            "object_categories": _object_categories(frame),
        }
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}), _META_KEY: json.dumps(stored)}
        )
        with tempfile.NamedTemporaryFile(
            dir=entry.parent, prefix=".tmp-", suffix=".parquet", delete=False
        ) as tmp:
            # read whole: no filter needs min/max
            if sealed:
                sink = pa.BufferOutputStream()
                pq.write_table(table, sink, write_statistics=False)
                data = sink.getvalue()
                tmp.write(memoryview(data))
                tmp.write(hashlib.sha256(data).digest())
            else:
                pq.write_table(table, tmp.name, write_statistics=False)
        os.replace(tmp.name, entry)
    # a column Arrow cannot type, a full disk: the report was read, only not cached
    except Exception:
        if "tmp" in locals():
            Path(tmp.name).unlink(missing_ok=True)
        return False
    evict(entry.parent)
    return True


def evict(folder: Path, max_bytes: int | None = None) -> None:
    """Remove the least recently used entries past the size cap, and temporary files of killed
    writers."""
    max_bytes = (
        max_bytes
        if max_bytes is not None
        else int(os.environ.get(MAX_BYTES_ENV, DEFAULT_MAX_BYTES))
    )
    now = time.time()
    entries = []
    for item in folder.iterdir():
        try:
            info = item.stat()
        except OSError:
            continue
        if item.name.startswith(".tmp-"):
            if now - info.st_mtime > _STALE_TMP_SECONDS:
                item.unlink(missing_ok=True)
            continue
        entries.append((info.st_mtime, info.st_size, item))
    total = sum(size for _, size, _ in entries)
    for _, size, item in sorted(entries):
        if total <= max_bytes:
            break
        item.unlink(missing_ok=True)
        total -= size
