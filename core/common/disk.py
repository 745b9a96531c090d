"""Writing to this machine's disk: a full disk, a quota or a file size limit is one line with the
fix, and a file is written whole or not at all (a later run must never take a half-written report
for a whole one)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import FlopscopeError

_HOME = "or set FLOPSCOPE_HOME to a folder on another disk"
# errno -> (the problem, the fix) for the ways a disk refuses a write
_REFUSALS = {
    errno.ENOSPC: ("no space left on device", f"free space on it, {_HOME}"),
    errno.EDQUOT: ("disk quota exceeded", f"free space within your quota, {_HOME}"),
    errno.EFBIG: (
        "file too large for this file system or for the process's file size limit",
        f"raise the limit (`ulimit -f`), {_HOME}",
    ),
    errno.EROFS: ("read-only file system", "set FLOPSCOPE_HOME to a writable folder"),
}


def write_error(path: Path | str, exc: OSError, doing: str, kept: str = "") -> FlopscopeError:
    """`path: DOING: PROBLEM; FIX` for a failed write. `kept`: where what was being written can
    still be had, said after the fix."""
    problem, fix = _REFUSALS.get(
        exc.errno or 0, (exc.strerror or str(exc), f"check the disk holding it, {_HOME}")
    )
    return FlopscopeError(path, f"{doing}: {problem}", f"{fix}{'; ' + kept if kept else ''}")


@contextlib.contextmanager
def partial_file(path: Path) -> Iterator[Path]:
    """A file written under a `.partial` name and renamed to `path` only once the `with` block ends
    without an error; on an error the partial file is removed. So `path` is whole or absent,
    whatever stops the write."""
    partial = path.with_name(path.name + ".partial")
    try:
        yield partial
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise


def write_text_whole(path: Path, text: str, doing: str) -> None:
    """`path.write_text(text)`, whole or not at all; a refusal is write_error's line."""
    try:
        with partial_file(path) as partial:
            partial.write_text(text)
    except OSError as exc:
        raise write_error(path, exc, doing) from None
