"""Write tables atomically (CSV, Parquet or JSON by extension) and turn them into JSON-ready
rows."""

from __future__ import annotations

import io
import json
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError, path_error
from ..table.columns import CANONICAL, FMA_CONVENTION, NOT_WRITTEN
from .cells import arrow_safe, json_ready, nested_as_json, whole_integers

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

    from ..report.report import Report

FORMATS = {".csv": "csv", ".parquet": "parquet", ".json": "json"}


def run_meta(report: Report) -> dict[str, Any]:
    """What a reader of the rows needs beside them: the run's meta, its totals, the ceilings it is
    judged against, the launches measured above theirs, the FMA convention its FLOPs follow and what
    each canonical column means, in which unit (`report --json`, JSON and Parquet exports alike)."""
    return {
        **report.meta.to_dict(m.as_dict() for m in report.missing),
        "summary": report.summary().as_dict(),
        "ceilings": [json_ready(c.__dict__) for c in report.ceilings()],
        # launches measured above their own ceiling: the ceiling or the count is wrong
        # (over_ceiling.py)
        "over_ceiling": [json_ready(w.as_dict()) for w in report.over_ceiling()],
        "fma_convention": FMA_CONVENTION,
        "columns": {name: {"unit": unit, "meaning": meaning} for name, unit, meaning in CANONICAL},
    }


def write_table(
    df: pd.DataFrame,
    out: str | Path,
    meta: dict[str, Any] | None = None,
    raw_csv: bool = False,
    order: np.ndarray | None = None,
) -> Path:
    """Write `df` to `out` in the format its extension names; the target appears whole or not at
    all. A CSV's text cells that a spreadsheet would run as a formula are `defused` unless
    `raw_csv`. `order`: the rows' positions in the order to write them (`Report.view_order`), where
    not the table's: CSV and JSON take each chunk's rows in it, so a million-launch table is never
    copied sorted."""
    out = Path(out)
    kind = check_target(out)
    directory = out.parent if str(out.parent) else Path(".")
    df = whole_integers(df.drop(columns=[c for c in NOT_WRITTEN if c in df]))
    try:
        fd, tmp = _new_temp(directory, out.name)
    except OSError as exc:
        raise FlopscopeError(
            out,
            f"cannot create a file in {directory} ({exc.strerror or exc})",
            "choose a folder you can write to",
        ) from None
    try:
        with io.BufferedWriter(_WrittenBackAsItGoes(fd, "wb")) as handle:
            if kind == "csv":
                from .csv_writer import write_csv

                write_csv(nested_as_json(df), handle, safe=not raw_csv, order=order)
            elif kind == "parquet":
                rows = df if order is None else df.take(order).reset_index(drop=True)
                _write_parquet(nested_as_json(rows), handle, meta)
            else:
                # strict JSON: null for unknown and non-finite numbers (json.dumps would write NaN
                # and Infinity)
                from .json_writer import write_json_doc

                write_json_doc(meta or {}, df, handle, order=order)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, out)
    except OSError as exc:  # disk full, target turned into a folder meanwhile, ...
        Path(tmp).unlink(missing_ok=True)
        raise FlopscopeError(
            out, f"cannot write ({exc.strerror or exc})", "free space or choose another path"
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


_PARQUET_ROWS = 131072  # rows per row group written


def _write_parquet(df: pd.DataFrame, handle: BinaryIO, meta: dict[str, Any] | None) -> None:
    """Rows, with the run's meta as JSON under the schema key `flopscope` (pyarrow keeps pandas' own
    key)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    safe = arrow_safe(df)
    schema = pa.Schema.from_pandas(safe, preserve_index=False)
    extra = {b"flopscope": json.dumps(meta, default=str).encode()} if meta else {}
    if df.attrs:  # as pandas' own to_parquet keeps them (a diff's run totals)
        extra[b"PANDAS_ATTRS"] = json.dumps(df.attrs, default=str).encode()
    schema = schema.with_metadata({**(schema.metadata or {}), **extra})
    # A slice of rows at a time, one row group each: the whole table in Arrow beside the frame would
    # double the export's peak memory.
    with pq.ParquetWriter(handle, schema) as writer:
        for start in range(0, max(len(safe), 1), _PARQUET_ROWS):
            part = safe.iloc[start : start + _PARQUET_ROWS]
            writer.write_table(pa.Table.from_pandas(part, schema=schema, preserve_index=False))


def check_target(out: Path) -> str:
    """The format `out` names ("csv", "parquet", "json"); FlopscopeError when it cannot be written
    there: an unknown extension, a missing folder, a folder in its place. Cheap: a dialog checks
    before it closes."""
    kind = FORMATS.get(out.suffix.lower())
    if kind is None:
        raise FlopscopeError(
            out,
            f"unknown export format {out.suffix or '(none)'}",
            "use a .csv, .parquet or .json file name",
        )
    directory = out.parent if str(out.parent) else Path(".")
    try:  # Path.is_dir raises for a name too long, or a folder on the way that cannot be searched
        if not directory.is_dir():
            raise FlopscopeError(
                out, "the folder does not exist", "create it or choose another path"
            )
        if out.is_dir():
            raise FlopscopeError(
                out, "is a folder", f"name a file in it, e.g. {out / ('kernels' + out.suffix)}"
            )
    except OSError as exc:
        raise path_error(out, exc) from None
    return kind


def _new_temp(directory: Path, name: str) -> tuple[int, str]:
    """A fresh temporary file beside the target. Unlike mkstemp (mode 0600) it is opened with 0666,
    so the export ends with the umask's mode like any file a tool writes."""
    for _ in range(100):
        tmp = str(directory / f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return (
                os.open(
                    tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
                ),
                tmp,
            )
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


class _WrittenBackAsItGoes(io.FileIO):
    """A file whose pages start going to disk every 16 MB as they are written, so the fsync that
    ends an export waits for the last few MB instead of all of them (the kernel alone starts
    writing back only after tens of seconds). posix_fadvise(DONTNEED) starts the write-back and
    returns; where the OS has no posix_fadvise, the fsync writes it all."""

    STEP = 16 << 20

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # io.FileIO's
        super().__init__(*args, **kwargs)
        self._written = self._advised = 0

    def write(self, data: ReadableBuffer) -> int:
        n = super().write(data)
        self._written += n or 0
        if self._written - self._advised >= self.STEP and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(
                self.fileno(), self._advised, self._written - self._advised, os.POSIX_FADV_DONTNEED
            )
            self._advised = self._written
        return n
