"""Bounds on what reading one report may cost: bytes unpacked or copied from a stream, and the wait
for a named pipe's writer. A decompression bomb (785 bytes of bzip2 unpack to 1 GB) or `/dev/zero`
would otherwise fill $TMPDIR, and a FIFO nobody writes to would block forever."""

from __future__ import annotations

import errno
import io
import os
import re
from pathlib import Path

from ..common.errors import FlopscopeError

MAX_INPUT_ENV = "FLOPSCOPE_MAX_INPUT"
FIFO_WAIT_ENV = "FLOPSCOPE_FIFO_WAIT"
# The largest real reports open: a million-launch raw CSV is ~2 GB, a --set full .ncu-rep of a long
# training step 1-3 GB; past 4 GiB unpacked is a bomb or an endless stream, not a profile.
DEFAULT_MAX_INPUT = 4 << 30
# Real ncu output compresses 3-30x (an .ncu-rep embeds cubins; xz makes 14x of a cuBLAS report, gzip
# 20x of a raw CSV): 1000x is only reached by crafted input. Files that small unpack freely up to
# the floor below.
MAX_RATIO = 1000
RATIO_FLOOR = 256 << 20
DEFAULT_FIFO_WAIT = 10.0
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)
_SCALE = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def max_input_bytes() -> int:
    """The most bytes a stream or compressed file may unpack to: FLOPSCOPE_MAX_INPUT (`16G`, `500M`,
    bytes)."""
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT
    match = _SIZE.match(text)
    if not match:
        raise FlopscopeError(
            f"{MAX_INPUT_ENV}={text}", "is not a size", "write bytes or a size like 500M or 16G"
        )
    return int(float(match.group(1)) * _SCALE[match.group(2).upper()])


def unpack_limit(compressed_size: int | None) -> int:
    """The cap for one input: the configured maximum, and for a compressed file of `compressed_size`
    bytes also MAX_RATIO times its size (at least RATIO_FLOOR), whichever is lower, unless
    FLOPSCOPE_MAX_INPUT is set."""
    cap = max_input_bytes()
    if compressed_size is None or os.environ.get(MAX_INPUT_ENV, "").strip():
        return cap
    return min(cap, max(RATIO_FLOOR, MAX_RATIO * compressed_size))


def fifo_wait_s() -> float:
    text = os.environ.get(FIFO_WAIT_ENV, "").strip()
    try:
        return float(text) if text else DEFAULT_FIFO_WAIT
    except ValueError:
        raise FlopscopeError(
            f"{FIFO_WAIT_ENV}={text}", "is not a number of seconds", "write e.g. 30"
        ) from None


def too_big(shown: object, cap: int, compressed: bool) -> FlopscopeError:
    what = "unpacks to" if compressed else "holds"
    return FlopscopeError(
        shown,
        f"{what} more than {_human(cap)} (a decompression bomb or an endless stream?); nothing was"
        " read",
        f"to open a report this large, set {MAX_INPUT_ENV} (e.g."
        f" {MAX_INPUT_ENV}={_human(cap * 4)})",
    )


def _human(size: int) -> str:
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g}{unit}"
    return str(size)


# errno -> the problem, for the ways a disk refuses the temporary copy
_NO_ROOM = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for this file system or for the process's file size limit",
}


def no_room_for_copy(shown: object, folder: Path, exc: OSError, unpacking: bool) -> FlopscopeError:
    """The temporary copy (of a compressed file or a stream) could not be written: the disk holding
    $TMPDIR is full, not the input damaged."""
    doing = "unpack" if unpacking else "copy"
    problem = _NO_ROOM.get(exc.errno or 0, exc.strerror or str(exc))
    fix = (
        "raise the limit (`ulimit -f`), or set TMPDIR"
        if exc.errno == errno.EFBIG
        else "free space there, or set TMPDIR"
    )
    return FlopscopeError(
        shown,
        f"cannot {doing} it into {folder} (the temporary folder): {problem}",
        f"{fix} to a folder on a disk with room",
    )


def write_copy(dst: io.FileIO, chunk: bytes, shown: object, folder: Path, unpacking: bool) -> None:
    """`chunk` written whole to the unbuffered temporary copy (such a write may write part of it); a
    refusing disk is worded as `folder`'s (no_room_for_copy), not as the source's damage."""
    view = memoryview(chunk)
    try:
        while view:
            view = view[dst.write(view) or 0 :]
    except OSError as exc:
        raise no_room_for_copy(shown, folder, exc, unpacking) from None
