"""A binary file read as valid UTF-8: every byte sequence that is no UTF-8 becomes U+FFFD (shown as
�).

ncu writes UTF-8, but a kernel name or an NVTX range holds whatever bytes the program gave it.
pyarrow's CSV reader decodes a row it cannot fit (a rule row, a ragged row) to hand it to the
invalid-row handler; invalid UTF-8 there raises inside pyarrow, which prints "Exception ignored ...
UnicodeDecodeError" on stderr and fails the read. Fed through this, the same bytes read as the slow
readers read them (errors="replace")."""

from __future__ import annotations

import codecs
from typing import Protocol


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class Utf8Repaired:
    """`raw` (a binary file open for reading, from where it stands) as a stream of valid UTF-8. A
    `read(n)` returns at most n bytes, as Arrow requires of a Python file (a replaced byte grows to
    three)."""

    def __init__(self, raw: _Readable) -> None:
        self._raw = raw
        self._tail = b""  # the start of a character the last chunk cut
        self._out = bytearray()
        self._eof = False

    def read(self, size: int = -1) -> bytes:
        if not self._out and not self._tail:
            chunk = self._raw.read(size)
            if chunk.isascii():  # nearly every chunk of an ncu CSV, and the end: passed on as it is
                return chunk
            self._feed(chunk)
        while not self._eof and (size < 0 or len(self._out) < size):
            self._feed(self._raw.read(max(size, 1 << 16) if size >= 0 else -1))
        n = len(self._out) if size < 0 else min(size, len(self._out))
        data = bytes(self._out[:n])
        del self._out[:n]
        return data

    def _feed(self, chunk: bytes) -> None:
        self._eof = not chunk
        data, self._tail = self._tail + chunk, b""
        # valid UTF-8 but for a character cut at the end
        for cut in (0, 1, 2, 3) if chunk else (0,):
            head = data[: len(data) - cut]
            try:
                head.decode("utf-8")
            except UnicodeDecodeError:
                continue
            self._out += head
            self._tail = data[len(head) :]
            return
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._out += decoder.decode(data, final=self._eof).encode("utf-8")
        # a character cut at the end, completed by the next chunk
        self._tail = decoder.getstate()[0]

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return False

    def close(self) -> None:  # the caller's `with` closes the file it opened
        pass
