"""A CSV read's progress, in bytes: the file the parsers read from, counting what they take.

A CSV's launches are known only once it is parsed (pyarrow and pandas read it in blocks of about a
MB), so its progress is told as bytes of the file read, `progress(bytes read, file size, "bytes")`;
an .ncu-rep's as launches. Counting costs one call per block: nothing measurable beside parsing the
block."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import BinaryIO

# The readers' progress callback (ncu_rep_stream.Progress) called with a third argument, the unit
# "bytes".
ByteProgress = Callable[[int, int, str], None]


class ProgressFile:
    """`handle` (a binary file open for reading) whose `read`s report the position reached to
    `progress`."""

    def __init__(self, handle: BinaryIO, progress: ByteProgress) -> None:
        self.handle, self.progress = handle, progress
        self.total = os.fstat(handle.fileno()).st_size

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.progress(min(self.handle.tell(), self.total), self.total, "bytes")
        return data

    def readline(self, size: int = -1) -> bytes:
        return self.handle.readline(size)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self.handle.closed

    def close(self) -> None:  # the caller's `with` closes the file it opened
        pass


def counted(handle: BinaryIO, progress: ByteProgress | None) -> BinaryIO | ProgressFile:
    """`handle` itself without a `progress` to call, else the same file counting its reads."""
    return handle if progress is None else ProgressFile(handle, progress)
