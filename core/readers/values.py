"""Counter values no profiler writes: negative, infinite or absurdly large. Such a file was damaged
or edited, and its numbers would print as results ("Kernel time -177 us", "at ∞ B/s, inf% of its
ceiling")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError

# Far beyond any counter in SI units (a day of an H100 at peak is 1e20 FLOP; rates reach 1e13 B/s):
# a value past it is a damaged cell, and products of two such values stay finite in float64.
ABSURD = 1e30
# What one launch can take: ncu times it in whole nanoseconds, and no profiled launch runs a day.
# Outside these, a duration (1e21 s, or 1e-309 s, a subnormal float whose inverse is infinite) is a
# damaged cell. Zero is left to the readers' callers (a launch ncu could not time).
SHORTEST_LAUNCH_S = 1e-12
LONGEST_LAUNCH_S = 86400.0


def refuse_impossible(frame: pd.DataFrame, path: str | Path) -> None:
    """Refuse a metric table holding a negative, non-finite or absurd counter (NaN is a missing
    value, fine), naming the first such cell: its launch, metric and value.

    Refused rather than dropped: ncu never writes one, so the file is damaged, and its other numbers
    are then no more trustworthy than this one."""
    for name in frame.columns:
        if "__" not in str(name) or frame[name].dtype.kind != "f":
            continue
        values = frame[name].to_numpy()
        with np.errstate(invalid="ignore"):
            bad = np.isinf(values) | (values < 0) | (values > ABSURD)
        if bad.any():
            at = int(np.argmax(bad))
            value = values[at]
            why = "negative" if value < 0 else "not finite" if np.isinf(value) else "absurdly large"
            raise FlopscopeError(
                path,
                f"{_launch(frame, at)}: {name} is {value:g} ({why}; ncu writes no such "
                "counter): the file is damaged or was edited",
                "export it again from the .ncu-rep, or profile again",
            )
        if "__time_duration" in str(name):
            _refuse_impossible_duration(frame, name, values, path)


def _refuse_impossible_duration(
    frame: pd.DataFrame, name: str, seconds: np.ndarray, path: str | Path
) -> None:
    """A launch's duration (in seconds by now) outside what one launch can take, zero apart."""
    with np.errstate(invalid="ignore"):
        bad = ((seconds > 0) & (seconds < SHORTEST_LAUNCH_S)) | (seconds > LONGEST_LAUNCH_S)
    if bad.any():
        at = int(np.argmax(bad))
        raise FlopscopeError(
            path,
            f"{_launch(frame, at)}: {name} is {seconds[at]:g} s (a launch takes between 1 ps and a"
            " day; ncu writes no such duration): the file is damaged or was edited",
            "export it again from the .ncu-rep, or profile again",
        )


def _launch(frame: pd.DataFrame, row: int) -> str:
    ident = frame["launch_id"].iloc[row] if "launch_id" in frame else None
    return (
        f"launch {str(ident)[:20]}"
        if ident is not None and ident == ident
        else f"launch #{row + 1} of the file"
    )
