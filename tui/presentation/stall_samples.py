"""The Warp stalls panel drawn from PC sampling, for a report that has ncu's SourceCounters but not
its Warp State Statistics (a capture with `--section SourceCounters` alone): the warp samples of
each stall reason, summed over the launch's SASS addresses, as shares of all samples. Samples are
not cycles: the panel's title and first line say which it shows."""

from __future__ import annotations

import math
import numbers

import pandas as pd

from ...core.common import is_missing
from ...core.ncu.stalls import SAMPLE_COLUMNS, StallReason
from . import format as fmt

SAMPLED_TITLE = "Warp stalls, share of PC samples"
SAMPLE_BAR = 16  # cells of the largest reason's bar, as the cycles' panel draws it


def sampled_stalls(row: pd.Series) -> list[tuple[str, str]]:
    """Each reason with samples, most first: its samples, their share of all and a bar; then the
    top stall explained. Empty where the row has no samples."""
    values = []
    for column, reason in SAMPLE_COLUMNS.items():
        value = row.get(column)
        if not is_missing(value) and isinstance(value, (int, float)) and value > 0:
            values.append((reason, float(value)))
    total = math.fsum(v for _, v in values)
    if not total:
        return []
    values.sort(key=lambda rv: -rv[1])  # stable: ties keep ncu's order of reasons
    top = values[0][1]
    count = row.get("count")
    launches = (
        f" over {fmt.integer(count)} launches"
        if isinstance(count, numbers.Real) and float(count) > 1
        else ""
    )
    out = [
        (
            "Samples",
            f"{fmt.integer(total)} warp samples{launches}, not cycles (PC sampling: the report"
            " has no warp state statistics)",
        )
    ]
    out += [
        (r.title, f"{fmt.integer(v):>9} {100 * v / total:5.1f}% {fmt.bar(v / top, SAMPLE_BAR)}")
        for r, v in values
    ]
    return out + top_stall([r for r, _ in values])


def top_stall(reasons: list[StallReason]) -> list[tuple[str, str]]:
    """`Top stall`: the first reason that is a stall (`selected` is the issue itself), what it means
    and what usually helps."""
    worst = next((r for r in reasons if r.reason != "selected"), None)
    if worst is None:
        return []
    return [("Top stall", f"{worst.title}: {worst.meaning}; helps: {worst.fix}")]
