"""The numbers a diff shows beside diff_runs' rows, for the app's Diff screen and `flopscope diff
--no-tui` alike (no Textual here: the CLI table must not load it)."""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import pandas as pd

from ...core.analysis import run_total
from ...core.export import json_ready
from . import format as fmt


def diff_meta(
    rows: pd.DataFrame,
    names: tuple[str, str],
    ids: tuple[int | None, int | None],
    gpus: tuple[str | None, str | None],
) -> dict[str, object]:
    """What a diff's rows are of: both runs by name and id, their GPUs, each run's known kernel time
    (as the run list and the totals line give it) and the launches ncu did not profile (not in that
    time). One copy for `flopscope diff --json` and the Diff screen's export, so that neither loses
    what the other says."""
    meta = json_ready(
        {
            "a": names[0],
            "b": names[1],
            "a_id": ids[0],
            "b_id": ids[1],
            "gpu_a": gpus[0],
            "gpu_b": gpus[1],
            "total_time_s_a": run_total(rows, "time_counted_s", "a"),
            "total_time_s_b": run_total(rows, "time_counted_s", "b"),
            "not_profiled_a": int(run_total(rows, "not_profiled", "a")),
            "not_profiled_b": int(run_total(rows, "not_profiled", "b")),
        }
    )
    return cast("dict[str, object]", meta)  # json_ready keeps a dict a dict


def table_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """diff_runs' rows plus the display columns: B/A only where both runs ran the group (a group one
    run did not run has B/A 0 or infinite, which would read as a measurement; `Only in` says which
    run ran it: "A", "B" or blank)."""
    both = (rows["presence"] == "both").to_numpy()
    only = np.select(
        [rows["presence"] == "only in A", rows["presence"] == "only in B"], ["A", "B"], ""
    )
    return rows.assign(time_ratio=rows["duration_s_ratio"].where(both), only_in=only)


def known_time(rows: pd.DataFrame, side: str) -> tuple[float, bool]:
    """Run `side`'s kernel time as `flopscope runs` lists it, and whether it is a lower bound: the
    launches of known time (unprofiled ones are counted there, not summed), `≥` where some launch's
    time is unknown."""
    counted = run_total(rows, "time_counted_s", side)  # unprofiled: not in the times
    return counted, math.isnan(run_total(rows, "total_time_s", side)) and not math.isnan(counted)


def totals_line(rows: pd.DataFrame) -> str:
    """`kernel time 87.1 us -> 90.2 us (+3.10 us) · 7 kernel group(s)`: the run totals as `flopscope
    runs` shows them (`≥ 87.1 us` where a launch's time is unknown), and how many launches ncu could
    not profile (counted there, not summed). The change of a lower bound is one too: `≥` where only
    B's time is one, `≤` where only A's."""
    (time_a, low_a), (time_b, low_b) = known_time(rows, "a"), known_time(rows, "b")
    change = fmt.seconds(time_b - time_a)
    if change:
        change = (
            f"{'≥ ' if low_b and not low_a else '≤ ' if low_a and not low_b else ''}"
            f"{'+' if time_b > time_a else ''}{change}"
        )
    line = (
        f"kernel time {fmt.at_least(fmt.seconds(time_a), low_a) or 'n/a'} -> "
        f"{fmt.at_least(fmt.seconds(time_b), low_b) or 'n/a'} ({change or 'n/a'}) · {len(rows)} "
        f"{'module node(s)' if rows.attrs.get('by') == 'module' else 'kernel group(s)'}"
    )
    skipped = [
        f"{side.upper()} {int(n)}"
        for side in "ab"
        if (n := run_total(rows, "not_profiled", side)) > 0
    ]
    if skipped:
        line += f" · launches ncu did not profile (not in the times): {', '.join(skipped)}"
    return line


def time_change(seconds) -> str:
    """A ΔTime cell, signed as the totals line signs it: `+288 ns` where B took longer, `-1.20 us`
    where less."""
    text = fmt.seconds(seconds)
    return f"+{text}" if text and float(seconds) > 0 else text


def _bytes(v) -> str:
    return fmt.si(v, "B")


# The Kernel screen's labels (kernel_sections) whose change from run A to run B is a number:
# (column, format).
CHANGES = {
    "Total time": ("duration_s", fmt.seconds),
    "Launches": ("count", fmt.integer),
    "SM clock": ("sm_clock_hz", lambda v: fmt.si(v, "Hz")),
    "All FLOPs": ("flop", lambda v: fmt.si(v, "FLOP")),
    "FLOP/s": ("flop_per_s", lambda v: fmt.si(v, "FLOP/s")),
    "% of peak": ("pct_of_peak", None),  # percentage points, not a % of a %
    "% of roof": ("pct_of_roof", None),
    "DRAM read": ("dram_read_bytes", _bytes),
    "DRAM write": ("dram_write_bytes", _bytes),
    "DRAM total": ("dram_bytes", _bytes),
    "DRAM bandwidth": ("dram_bytes_per_s", lambda v: fmt.si(v, "B/s")),
    "L2": ("l2_bytes", _bytes),
    "L1/TEX": ("l1_bytes", _bytes),
}


def change(label: str, a: pd.Series, b: pd.Series) -> str:
    """The diff's side by side Δ of one metric, B - A: `+3.10 us (+12.0%)` (of A's value), `-1.5 pp`
    for a percentage; "" where the label is no number or either run lacks it."""
    column, render = CHANGES.get(label, ("", None))
    va, vb = _number(a.get(column)), _number(b.get(column))
    if not column or va is None or vb is None:
        return ""
    delta = vb - va
    sign = "+" if delta > 0 else ""
    if render is None:
        return f"{sign}{delta:.1f} pp"
    relative = f" ({sign}{fmt.pct(100 * delta / va)})" if va else ""
    return f"{sign}{render(delta)}{relative}"


def _number(value: object) -> float | None:
    """A finite number, else None (missing, text such as "(mixed)")."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None
