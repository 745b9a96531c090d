"""Junk in an input, found as its bytes go by: runs of zero bytes, a line that never ends, one line
repeated, an .ncu-rep block that starts with zeros. A padded copy (a report followed by GBs of
zeros), a sparse file or a decompression bomb of text is refused where its junk starts, in about the
time reading that far takes, so memory, $TMPDIR and time stay bounded by the useful content rather
than by the file's size or the size cap.

The same watches run on a file read in place (`refuse_junk_file`) and on a stream being copied (a
compressed file, a pipe: `watch_for`)."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Protocol

from ..common.errors import FlopscopeError
from .ncu_rep_stream import MAGIC, message_classes

# No ncu text holds this many zero bytes in a row (a hostile kernel name's NULs are a few; a CSV has
# none): one file-system block, the least a hole (sparse file) spans.
ZERO_RUN = 4096
# ncu's longest lines are raw-page rows with per-SASS-address instance cells: hundreds of KB for one
# kernel.
MAX_LINE = 64 << 20
# One line filling half of this many 1 MiB chunks in a row: every ncu row carries its launch's ID,
# so no row repeats; a program printing one line for 64 MiB is not a profile either.
REPEATED_CHUNKS = 64
# The longest block header of every real report here is 135 KB (its string table): junk read as a
# length prefix is mostly far longer.
MAX_HEADER = 16 << 20
_U32 = struct.Struct("<I")
_FIX = "pass the report itself: re-export or copy it again from the GPU host"


class Watch(Protocol):
    def feed(self, chunk: bytes, offset: int) -> None: ...


def watch_for(first: bytes, shown: object, what: str = "") -> Watch:
    """The watch for a stream whose first bytes are `first`: framing for an .ncu-rep, text checks
    otherwise. Offsets in its errors are of `what` (e.g. "of what it unpacks to")."""
    return RepWatch(shown, what) if first.startswith(MAGIC) else TextWatch(shown, what)


class TextWatch:
    """Zero runs, endless lines and repeated lines in ncu text (a CSV or a console log), chunk by
    chunk."""

    def __init__(self, shown: object, what: str = "") -> None:
        self.shown, self.what = shown, f" {what}" if what else ""
        # the last bytes of the previous chunk, so a zero run across two chunks is seen
        self.tail = b""
        self.line_start = 0
        self.repeats = 0
        self.repeat_start = 0
        self.before = (b"", 0)  # the last chunk that was not one line repeated, and its offset

    def feed(self, chunk: bytes, offset: int) -> None:
        self.zeros(chunk, offset)
        self._line(chunk, offset)
        self._repeated(chunk, offset)
        self.tail = chunk[-(ZERO_RUN - 1) :]

    def zeros(self, chunk: bytes, offset: int) -> None:
        data = self.tail + chunk
        at = data.find(b"\0" * ZERO_RUN)
        if at < 0:
            return
        start = len(data[:at].rstrip(b"\0"))
        where = offset - len(self.tail) + start
        raise FlopscopeError(
            self.shown,
            f"zero bytes from byte {where:,}{self.what} (a padded, sparse or damaged copy)",
            _FIX,
        )

    def _line(self, chunk: bytes, offset: int) -> None:
        # a progress bar's `\r` updates end lines too
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if cut >= 0:
            self.line_start = offset + cut + 1
        if offset + len(chunk) - self.line_start > MAX_LINE:
            raise FlopscopeError(
                self.shown,
                f"a line of more than {MAX_LINE / (1 << 20):g} MiB from byte"
                f" {self.line_start:,}{self.what} (no ncu output has one: junk, or not ncu text)",
                _FIX,
            )

    def _repeated(self, chunk: bytes, offset: int) -> None:
        first = chunk.find(b"\n")
        second = chunk.find(b"\n", first + 1) if first >= 0 else -1
        line = chunk[first + 1 : second + 1] if second > first else b""
        if len(line) < 2 or chunk.count(line) * len(line) * 2 < len(chunk):
            self.repeats = 0
            self.before = (chunk, offset)
            return
        if not self.repeats:  # the repeats may have begun in the chunk before, after its first line
            earlier = self.before[0].find(line)
            self.repeat_start = self.before[1] + earlier if earlier >= 0 else offset + first + 1
        self.repeats += 1
        if self.repeats >= REPEATED_CHUNKS:
            raise FlopscopeError(
                self.shown,
                f"one line repeated over and over from byte {self.repeat_start:,}{self.what} "
                "(every ncu row carries its launch's ID: junk, or a decompression bomb)",
                _FIX,
            )


class RepWatch:
    """An .ncu-rep's framing as it streams by ("NVR\\0", a length-prefixed FileHeader, then blocks:
    a length-prefixed BlockHeader and PayloadSize bytes): a block that starts with zero bytes
    (padding), or whose header is longer than MAX_HEADER or does not parse (junk), is refused there,
    not after the whole stream is unpacked. Payloads are skipped unread; only a block header is
    held, while it is incomplete."""

    def __init__(self, shown: object, what: str = "") -> None:
        self.shown, self.what = shown, f" {what}" if what else ""
        self.next_at = len(MAGIC)  # where the next length prefix is
        self.held = bytearray()  # bytes from next_at on, while a header is incomplete
        self.in_blocks = False

    def feed(self, chunk: bytes, offset: int) -> None:
        end = offset + len(chunk)
        if end <= self.next_at:
            return
        self.held += chunk[max(0, self.next_at - offset) :]
        while len(self.held) >= 4:
            (size,) = _U32.unpack_from(self.held, 0)
            if self.in_blocks and size == 0:
                raise self._refused(
                    f"zero bytes where a block should start, at byte {self.next_at:,}{self.what}"
                )
            if size > MAX_HEADER:
                raise self._refused(
                    f"a header {size:,} bytes long at byte {self.next_at:,}{self.what}"
                )
            if len(self.held) < 4 + size:
                return
            step = (
                4 + size + (self._payload(bytes(self.held[4 : 4 + size])) if self.in_blocks else 0)
            )
            self.in_blocks = True
            self.next_at += step
            del self.held[:step]  # all of it where the next prefix lies in a later chunk

    def _payload(self, header: bytes) -> int:
        from google.protobuf.message import DecodeError

        try:
            return int(message_classes()["BlockHeader"].FromString(header).PayloadSize)
        except DecodeError:
            raise self._refused(
                f"a block header that does not parse, at byte {self.next_at:,}{self.what}"
            ) from None

    def _refused(self, why: str) -> FlopscopeError:
        return FlopscopeError(
            self.shown,
            f"cannot read this .ncu-rep ({why}: a padded or damaged copy)",
            "the file is truncated or corrupt; copy it again from the GPU host",
        )


def refuse_junk_file(path: Path, chunk_size: int = 4 << 20) -> None:
    """Refuse a text file holding junk, reading it chunk by chunk (memory: one chunk): a hole first
    (a sparse file: `truncate -s 2G` after a report reads as 2 GB of zeros) found without reading,
    then the text checks."""
    watch = TextWatch(path)
    with path.open("rb") as handle:
        hole = _first_hole(handle.fileno())
        # a hole of a whole block is ZERO_RUN zeros: refused, from where the zeros start
        if hole is not None:
            back = max(0, hole - ZERO_RUN)
            handle.seek(back)
            TextWatch(path).zeros(handle.read(hole - back + ZERO_RUN), back)
        handle.seek(0)
        offset = 0
        while chunk := handle.read(chunk_size):
            watch.feed(chunk, offset)
            offset += len(chunk)


def _first_hole(fd: int) -> int | None:
    """Where the file's first hole starts, if it has one before its end (SEEK_HOLE; None where the
    file system does not say: then the zeros are found by reading)."""
    try:
        size = os.fstat(fd).st_size
        hole = os.lseek(fd, 0, os.SEEK_HOLE)
    except (OSError, AttributeError):
        return None
    return hole if hole < size else None
