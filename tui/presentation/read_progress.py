"""Progress of a long report read, as one line of text: `12,345 / 100,000 launches  4,100/s  ETA 21
s` for an .ncu-rep, `120 / 350 MB  95 MB/s  ETA 3 s` for a CSV (its launches are known only once it
is parsed).

The engine calls a plain `progress(launches read, launches in the file)`, or `progress(bytes read,
file size, "bytes")` for a CSV (core/readers); the CLI draws this line on stderr, the app on its
loading screen. Both see the same words."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def progress_line(done: int, total: int, elapsed_s: float, unit: str = "launches") -> str:
    """`done` of `total` launches (or bytes) after `elapsed_s` seconds, with the rate and the time
    left at that rate."""
    rate = done / elapsed_s if elapsed_s > 0 else 0.0
    if unit == "bytes":
        line = f"{done / 1e6:,.0f} / {total / 1e6:,.0f} MB"
    else:
        line = f"{done:,} / {total:,} launches" if total else f"{done:,} launches"
    if rate > 0:
        line += f"  {rate / 1e6:,.0f} MB/s" if unit == "bytes" else f"  {rate:,.0f}/s"
        if total > done:
            line += f"  ETA {_duration((total - done) / rate)}"
    return line


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60:02d} s"


AFTER_ENV = "FLOPSCOPE_PROGRESS_AFTER"


def after_seconds() -> float:
    """How long a read runs before its progress shows: FLOPSCOPE_PROGRESS_AFTER seconds (0: from the
    first launch), half a second by default, so a quick read shows nothing and nothing flickers."""
    try:
        return max(float(os.environ.get(AFTER_ENV, "0.5")), 0.0)
    except ValueError:
        return 0.5


class ReadProgress:
    """A progress callback for the readers that draws `progress_line` through `draw`, at most every
    `every_s` seconds and only once the read has taken `after_s` (`after_seconds()` unless
    given)."""

    def __init__(
        self,
        draw: Callable[[str], None],
        every_s: float = 0.1,
        after_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.draw, self.every_s, self.clock = draw, every_s, clock
        self.start = clock()
        self.next_at = self.start + (after_seconds() if after_s is None else after_s)
        self.drawn = False

    def __call__(self, done: int, total: int, unit: str = "launches") -> None:
        now = self.clock()
        if now < self.next_at:
            return
        self.next_at = now + self.every_s
        self.drawn = True
        self.draw(progress_line(done, total, now - self.start, unit))
