"""Progress of a long report read, as one line of text: `12,345 / 100,000 launches  4,100/s  ETA 21 s`.

The engine calls a plain `progress(launches read, launches in the file)` (core/readers); the CLI draws this line
on stderr, the app on its loading screen. Both see the same words."""

from __future__ import annotations

import time
from collections.abc import Callable


def progress_line(done: int, total: int, elapsed_s: float) -> str:
    """`done` of `total` launches after `elapsed_s` seconds, with the rate and the time left at that rate."""
    rate = done / elapsed_s if elapsed_s > 0 else 0.0
    line = f"{done:,} / {total:,} launches" if total else f"{done:,} launches"
    if rate > 0:
        line += f"  {rate:,.0f}/s"
        if total > done:
            line += f"  ETA {_duration((total - done) / rate)}"
    return line


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60:02d} s"


class ReadProgress:
    """A progress callback for the readers that draws `progress_line` through `draw`, at most every `every_s`
    seconds and only once the read has taken `after_s` (a quick read shows nothing, so nothing flickers)."""

    def __init__(self, draw: Callable[[str], None], every_s: float = 0.1, after_s: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.draw, self.every_s, self.clock = draw, every_s, clock
        self.start = clock()
        self.next_at = self.start + after_s
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now < self.next_at:
            return
        self.next_at = now + self.every_s
        self.drawn = True
        self.draw(progress_line(done, total, now - self.start))
