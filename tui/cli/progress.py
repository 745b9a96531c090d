"""A long report read's progress on stderr: one line, rewritten in place, cleared when the read
ends."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ..presentation.read_progress import ReadProgress
from .output_cache import unrecorded


@contextmanager
def read_progress(wanted: bool = True) -> Iterator[ReadProgress | None]:
    """The `progress` to pass to read_report: None (nothing drawn) unless `wanted` (not under
    --json) and stderr is a terminal; a log or a pipe gets no carriage returns. The line is cleared
    however the read ends (Ctrl-C included), so the next message starts on a clean line."""
    err = unrecorded(sys.stderr)  # drawn and erased: not the command's output
    if not wanted or not err.isatty():
        yield None
        return

    def draw(text: str) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        line = f"flopscope: reading {text}"
        # one cell spare: no wrap at the last column
        err.write("\r" + line[: max(width - 1, 1)] + "\x1b[K")
        err.flush()

    progress = ReadProgress(draw)
    try:
        yield progress
    finally:
        if progress.drawn:
            err.write("\r\x1b[K")
            err.flush()
