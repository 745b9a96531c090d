"""Readers: any real ncu output, chosen by content, into one metric table (one row per launch).

The table holds identity columns (see `wanted.IDENTITY`) and ncu metric columns under their ncu
names, every value already in SI base units. `core.counters` turns it into the canonical kernels
table."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import os
import re
import select
import stat
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, cast

import pandas as pd

from ..common.errors import FlopscopeError, path_error
from ..common.memory import out_of_memory, ran_out_of_memory
from ..common.units import UnitError, whole_numbers
from . import table_cache
from .csv_details import read_details
from .csv_raw import read_raw
from .csv_text import split_csv
from .junk import Watch, refuse_junk_file, watch_for
from .limits import fifo_wait_s, no_room_for_copy, too_big, unpack_limit, write_copy
from .ncu_rep import MAGIC, read_ncu_rep
from .ncu_rep_stream import Progress
from .result import MetricTable, ReaderMeta
from .values import refuse_impossible
from .wanted import objects

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["MetricTable", "Progress", "ReaderMeta", "read_metrics", "report_file"]

# ncu's raw page lists instanced metrics in one cell (per opcode; per SASS address for
# `thread_inst_executed_true`: 170 kB for one cuBLAS GEMM on an H100), past the csv module's 128 kB
# default.
csv.field_size_limit(2**31 - 1)

_HINT = (
    "flopscope reads .ncu-rep reports and `ncu --csv` output (--page raw or details), also gzip-,"
    " xz- or bzip2-compressed"
)


def report_file(path: str | Path) -> Path:
    """The report `path` names: itself, or for a run folder (what `flopscope profile` prints) its
    report.ncu-rep, so `open FOLDER` opens it instead of failing with "Is a directory"."""
    path = Path(path)
    # Path.is_dir and is_file raise where a folder on the way cannot be searched, or the name is too
    # long
    try:
        if not path.is_dir():
            return path
        if (path / "report.ncu-rep").is_file():
            return path / "report.ncu-rep"
    except OSError as exc:
        raise path_error(exc.filename or path, exc) from None
    raise FlopscopeError(
        path,
        "a folder with no report.ncu-rep in it",
        "pass a report file (.ncu-rep or ncu CSV), or a run folder made by `flopscope profile`",
    )


def read_metrics(path: str | Path, progress: Progress | None = None) -> MetricTable:
    """Read `path` (a report file or a run folder) and return (metric table, reader meta). Raises
    FlopscopeError on bad input. `progress(launches read, launches in all)` is called as an .ncu-rep
    is read, and `progress(bytes read, file size, "bytes")` as a CSV is.

    `-` is standard input; it, a named pipe or a process substitution (`<(ncu --csv ...)`) is first
    copied to a temporary file, since the readers seek (a CSV's last row is checked before its first
    is read). An .ncu-rep of 1 MB or more is read once: later reads take its table from the cache
    (table_cache.py)."""
    if str(path) == "-" or _is_stream(Path(path)):
        return _read_stream(Path(path), progress)
    path = report_file(path)
    # Only an .ncu-rep's table is kept (below), compressed or not: a CSV's lookup would always miss.
    entry = table_cache.entry_for(path) if _head(path) == MAGIC else None
    if entry is not None and (cached := table_cache.load(entry)) is not None:
        return MetricTable(cached[0], cast(ReaderMeta, cached[1]))  # stored by the read below
    try:
        frame, meta = _read_file(path, progress)
    except Exception as exc:  # out of memory: one line naming the limit, not a traceback
        if not ran_out_of_memory(exc):
            raise
        raise out_of_memory(path) from None
    if entry is not None and meta["format"] == "ncu-rep":
        # Only an .ncu-rep's table gets an entry of its own: a CSV is parsed in about the time its
        # entry takes to write, and the finished report's entry (report_cache.py) already spares its
        # later opens the parse.
        table_cache.save(entry, frame, meta)
    return MetricTable(frame, meta)


def _head(path: Path) -> bytes:
    """The first 4 bytes of the file, or of what it unpacks to; b"" where it cannot be read
    (_read_file says why)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
        if (opener := _compressed(head)) is not None:
            with opener(path, "rb") as handle:
                head = handle.read(4)
        return head
    except (OSError, EOFError, lzma.LZMAError, zlib.error):
        return b""


def _read_file(path: Path, progress: Progress | None = None) -> MetricTable:
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
    # worded as `flopscope PATH` and `open PATH` say it
    except (FileNotFoundError, NotADirectoryError):
        raise FlopscopeError(path, "no such file", "check the path") from None
    except OSError as exc:
        raise path_error(path, exc) from None
    if (opener := _compressed(head)) is not None:
        return _read_compressed(path, opener, progress)
    try:
        if head == MAGIC:
            frame, meta = read_ncu_rep(path, progress)
        elif head[:2] in _UTF16_BOMS:
            frame, meta = _read_utf16(path)
        else:
            frame, meta = _read_csv(path, head, progress)
    except UnitError as exc:
        raise FlopscopeError(
            path,
            f"{exc}: flopscope will not guess a conversion",
            "re-export it from the .ncu-rep (`ncu --import REPORT --csv --page raw`) or fix the "
            "unit (ncu's units row, or its Metric Unit column)",
        ) from None
    refuse_impossible(frame, path)
    _fill_identity(frame)
    for ident in _WHOLE_IDENTITY:
        frame[ident] = whole_numbers(frame[ident])
    return MetricTable(frame, meta)


def _is_stream(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(path.stat().st_mode) or stat.S_ISCHR(path.stat().st_mode)
    except OSError:
        return False  # read_metrics says why it cannot be opened


def _read_stream(path: Path, progress: Progress | None = None) -> MetricTable:
    stdin = str(path) == "-"
    if stdin and sys.stdin.isatty():  # would wait for typing, silently
        raise FlopscopeError(
            "standard input",
            "is the terminal, not a report",
            "pipe one in: `ncu --import R.ncu-rep --csv --page raw | flopscope report -`",
        )

    # an OSError: the only kind _read_copy catches here
    def unreadable(exc: Exception) -> FlopscopeError:
        reason = exc.strerror if isinstance(exc, OSError) else None
        return FlopscopeError(path, f"cannot read it ({reason or exc})", "check the path")

    return _read_copy(
        lambda: sys.stdin.buffer if stdin else _open_stream(path),
        "standard input" if stdin else path,
        unreadable,
        progress=progress,
    )


def _open_stream(path: Path) -> BinaryIO | _PipeReader:
    """A named pipe opened without blocking on its writer: `open` would wait forever for one that
    never comes. Nothing written within FLOPSCOPE_FIFO_WAIT seconds (10 by default) is refused in
    one line."""
    if not stat.S_ISFIFO(path.stat().st_mode):
        return path.open("rb")  # a character device (/dev/zero): the size cap ends an endless one
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    deadline = time.monotonic() + fifo_wait_s()
    while True:
        try:
            first = os.read(fd, 1 << 16)
        # a writer is there and has written nothing yet: it may take long (ncu profiling)
        except BlockingIOError:
            break
        if first:
            return _PipeReader(fd, first)
        if time.monotonic() > deadline:  # EOF with no writer: nobody has opened the pipe to write
            os.close(fd)
            raise FlopscopeError(
                path,
                f"a named pipe nothing was written to in {fifo_wait_s():g} s",
                "start the program that writes to it first, or set FLOPSCOPE_FIFO_WAIT (seconds) to"
                " wait longer",
            )
        time.sleep(0.05)
    return _PipeReader(fd, b"")


class _PipeReader(io.RawIOBase):
    """A non-blocking pipe's descriptor read as a blocking file, the bytes already read first."""

    def __init__(self, fd: int, first: bytes) -> None:
        self.fd, self.pending = fd, first

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        # A view released on return: RawIOBase.read resizes the bytearray it passed, refused while a
        # view is held.
        with memoryview(buffer) as view:
            if self.pending:
                n = min(len(view), len(self.pending))
                view[:n], self.pending = self.pending[:n], self.pending[n:]
                return n
            while True:
                try:
                    data = os.read(self.fd, len(view))
                except BlockingIOError:
                    select.select([self.fd], [], [])
                    continue
                view[: len(data)] = data
                return len(data)

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


# gzip.open, lzma.open or bz2.open, as the readers call them.
_Opener = Callable[[Path, Literal["rb"]], io.BufferedIOBase]


def _compressed(head: bytes) -> _Opener | None:
    """The stdlib opener for a gzip, xz or bzip2 file (by magic bytes, as the readers choose by
    content)."""
    openers: tuple[tuple[bytes, _Opener], ...] = (
        (b"\x1f\x8b", gzip.open),
        (b"\xfd7zX", lzma.open),
        (b"BZh", bz2.open),
    )
    for magic, opener in openers:
        if head.startswith(magic):
            return opener
    return None


def _read_compressed(path: Path, opener: _Opener, progress: Progress | None = None) -> MetricTable:
    """A compressed report or CSV (reports of cuBLAS kernels shrink 14x with xz: they embed the
    cubin) is unpacked to a temporary file first: ncu_report loads from a path, and the CSV readers
    seek."""

    def damaged(exc: Exception) -> FlopscopeError:
        return FlopscopeError(
            path,
            f"damaged compressed file ({str(exc)[:120] or type(exc).__name__})",
            "compress the original report again, or pass it uncompressed",
        )

    return _read_copy(
        lambda: opener(path, "rb"),
        path,
        damaged,
        broken=(OSError, EOFError, lzma.LZMAError, zlib.error),
        packed=path.stat().st_size,
        progress=progress,
    )


def _read_copy(
    source: Callable[[], BinaryIO | io.BufferedIOBase | io.RawIOBase],
    shown: str | Path,
    failed: Callable[[Exception], FlopscopeError],
    broken: tuple[type[Exception], ...] = (OSError,),
    packed: int | None = None,
    progress: Progress | None = None,
) -> MetricTable:
    """Read a temporary copy of what `source` opens (a pipe, a compressed file): the readers need a
    file they can seek, or a path. `failed` words an error of `broken` while copying; the readers'
    errors name `shown`, what the user passed, not the copy. The copy stops at `limits.unpack_limit`
    (`packed`: the compressed file's size), refused in one line."""
    cap = unpack_limit(packed)
    watch: Watch | None = None
    with tempfile.TemporaryDirectory(prefix="flopscope-") as folder:
        copy = Path(folder) / "copy"
        try:
            # Unbuffered: a full disk is seen at the write that hits it, not at a close that words
            # it as the source's damage.
            with source() as src, _opened_for_copy(copy, shown, packed is not None) as dst:
                copied = 0
                while chunk := src.read(1 << 20):
                    if not copied and packed is not None and _compressed(chunk[:4]):
                        raise FlopscopeError(
                            shown,
                            "is compressed twice (an archive inside an archive)",
                            "unpack it once, or pass the report itself",
                        )
                    if not copied and not _could_be_report(chunk):
                        raise FlopscopeError(
                            shown,
                            "is not an ncu report: its first bytes are neither an .ncu-rep's nor"
                            " text",
                            "pass an .ncu-rep or an ncu CSV (`ncu --import R.ncu-rep --csv --page"
                            " raw`)",
                        )
                    watch = watch or watch_for(
                        chunk, shown, "of what it unpacks to" if packed is not None else ""
                    )
                    # junk refused where it starts, before the cap is reached
                    watch.feed(chunk, copied)
                    copied += len(chunk)
                    if copied > cap:
                        raise too_big(shown, cap, packed is not None)
                    write_copy(dst, chunk, shown, copy.parent.parent, packed is not None)
        except broken as exc:
            raise failed(exc) from None
        try:
            # not read_metrics: a temporary copy is not worth a cache entry
            return _read_file(copy, progress)
        except FlopscopeError as err:
            raise FlopscopeError(shown, err.problem, err.fix) from None


@contextmanager
def _opened_for_copy(copy: Path, shown: str | Path, unpacking: bool) -> Iterator[io.FileIO]:
    try:
        handle = io.FileIO(copy, "wb")
    except OSError as exc:
        raise no_room_for_copy(shown, copy.parent.parent, exc, unpacking) from None
    with handle:
        yield handle


def _could_be_report(first: bytes) -> bool:
    """Whether a stream's first chunk can begin a report: an .ncu-rep's magic, or text (an ncu CSV
    or log: no NUL, UTF-8 or UTF-16 with its mark). /dev/zero or /dev/urandom is refused at once,
    not after the size cap."""
    head = first[: 1 << 16]
    if head.startswith((MAGIC, *_UTF16_BOMS)) or _compressed(head[:4]):
        return True
    if b"\0" in head:
        return False
    try:
        head[:-4].decode("utf-8")  # the chunk may end inside a character
    except UnicodeDecodeError:
        return False
    return True


# Windows PowerShell's `>` writes UTF-16 with a byte-order mark; ncu itself writes UTF-8.
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_WHOLE_IDENTITY = ("device", "stream", "registers")


def _read_utf16(path: Path) -> MetricTable:
    """The CSV readers work on UTF-8 bytes at file offsets: transcode to a temporary UTF-8 copy
    first."""
    # before a copy as big as the junk is made; its offsets are the user's file's
    refuse_junk_file(path)
    with tempfile.TemporaryDirectory(prefix="flopscope-") as folder:
        copy = Path(folder) / path.name
        with (
            path.open(encoding="utf-16", errors="replace", newline="") as src,
            copy.open("w", encoding="utf-8", newline="") as dst,
        ):
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        try:
            with copy.open("rb") as handle:
                return _read_csv(copy, handle.read(4))
        except FlopscopeError as err:  # name the user's file, not the temporary copy
            raise FlopscopeError(path, err.problem, err.fix) from None


def _read_csv(path: Path, head: bytes, progress: Progress | None = None) -> MetricTable:
    if path.stat().st_size == 0 or (len(head) < 4 and not head.strip()):
        raise FlopscopeError(path, "the file is empty", "profile again or pass the right file")
    with path.open("rb") as handle:
        start = handle.read(4096)
    if not start.strip():
        raise FlopscopeError(path, "the file is empty", "profile again or pass the right file")
    if b"\x00" in start and not start.lstrip(b"\xef\xbb\xbf").startswith((b'"', b"==")):
        # ncu's CSV starts with a quoted cell or its ==PROF== lines; past that, a NUL is just a
        # character of some cell (a hostile kernel name), read and escaped like any other control
        # character.
        raise FlopscopeError(path, "unknown binary format", _HINT)
    # zero padding, holes, endless or repeated lines: before a parser holds them in memory
    refuse_junk_file(path)
    try:
        doc = split_csv(path)
        layout = read_details if _check_shape(path, doc.header) else read_raw
        frame, meta = layout(doc, progress)
    except (ValueError, KeyError, IndexError, csv.Error, pd.errors.ParserError) as exc:
        raise FlopscopeError(
            path,
            f"malformed ncu CSV ({type(exc).__name__}: {str(exc)[:120]})",
            "re-export it with `ncu --import REPORT --csv --page raw`",
        ) from None
    if frame.empty:
        raise FlopscopeError(
            path,
            "the CSV has a header but no kernel rows",
            "the run profiled no kernels; check ncu's filters (-k, --launch-count)",
        )
    meta["preamble"] = doc.preamble[-4000:]
    return MetricTable(frame, meta)


_DETAILS = {"Metric Name", "Metric Unit", "Metric Value"}
_REEXPORT = "re-export it with `ncu --import REPORT --csv --page raw` (or --page details)"


def _check_shape(path: Path, header: list[str]) -> bool:
    """The columns ncu always prints, and a last row as wide as the header; True for the details
    layout. Without these checks a damaged file reads as something else (a details page without its
    value column as a raw page of empty launches), and exits 0."""
    present = _DETAILS & set(header)
    if present and present != _DETAILS:
        lost = ", ".join(f'"{h}"' for h in sorted(_DETAILS - present))
        raise FlopscopeError(path, f"a details-layout CSV without its {lost} column", _REEXPORT)
    if "Kernel Name" not in header:
        raise FlopscopeError(path, 'no "Kernel Name" column', _REEXPORT)
    if not present and not any("__" in h for h in header):
        raise FlopscopeError(
            path, "no metric columns (ncu names them like gpu__time_duration.sum)", _REEXPORT
        )
    # Details rows stop after "Metric Value" (the rule columns after it are for rule rows); raw rows
    # are full.
    needed = header.index("Metric Value") + 1 if present else len(header)
    if _cut_short(path, needed):
        raise FlopscopeError(
            path,
            "its last row stops short: the file is truncated",
            "copy it again, or re-export it from the .ncu-rep",
        )
    return bool(present)


_RECORD_START = re.compile(r'^"\d+","')  # every ncu CSV row starts with its quoted launch ID


def _cut_short(path: Path, needed: int) -> bool:
    """True when the table's last row is cut. ncu quotes every cell, so a whole row ends in a quote
    (or the comma before an empty last cell) and has `needed` cells. The row is read from the line
    where it starts (a rule's message can span lines inside its quoted cell); lines after it that
    are no part of it (the program printing after ncu's table, ncu's own `==` lines) are not the
    table's."""
    lines = [
        line.rstrip() for line in _tail_lines(path) if line.strip() and not line.startswith("==")
    ]
    start = next((i for i in range(len(lines) - 1, -1, -1) if _RECORD_START.match(lines[i])), None)
    if start is None:
        # no row in view (a header alone is reported later; a row longer than the window passes)
        return False
    reader = csv.reader(io.StringIO("\n".join(lines[start:])))
    cells = next(reader)
    return not lines[start + reader.line_num - 1].endswith(('"', ",")) or len(cells) < needed


def _tail_lines(path: Path, chunk: int = 1 << 16) -> list[str]:
    """The file's last lines, the first of them whole: a raw page of per-opcode instances has rows
    of hundreds of KB, so the window grows until it starts at a line break (or the file's start)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        while True:
            start = max(0, size - chunk)
            handle.seek(start)
            tail = handle.read()
            body = tail.rstrip()
            cut = body.rfind(b"\n", 0, len(body) - 1) if body else -1
            if start == 0 or cut > 0:
                lines = tail.decode("utf-8", errors="replace").splitlines()
                # the first is partial unless the file starts there
                return lines if start == 0 else lines[1:]
            chunk *= 4


def _fill_identity(frame: pd.DataFrame) -> None:
    """Identity that some layouts carry only as metrics (registers, GPU name, compute
    capability)."""
    pairs = {
        "registers": "launch__registers_per_thread",
        "gpu": "device__attribute_display_name",
        "stream": "launch__stream_id",
        "device": "launch__device_id",
    }
    for ident, metric in pairs.items():
        # Nothing to fill in a column that whole_numbers makes Int64 next: left as it is (no object
        # per launch).
        if metric in frame and (ident not in _WHOLE_IDENTITY or frame[ident].isna().any()):
            values = objects(frame[ident])
            fill = objects(frame[metric])
            missing = pd.isna(values)
            values[missing] = fill[missing]
            frame[ident] = pd.Series(values, index=frame.index, dtype=object)
