"""Numbers for people: SI prefixes, percentages, durations. Shared by the CLI tables and the app."""

from __future__ import annotations

import datetime as dt

from ...core.common import infinite as _infinite
from ...core.common import is_missing

# fmt.si: the tables' numbers, spelled as core's warning lines spell them
from ...core.common import si as si
from ...core.common import significant as _significant


def seconds(value) -> str:
    if is_missing(value):
        return ""
    value = float(value)
    if _infinite(value):
        return f"{_infinite(value)} s"
    if value == 0:
        return "0 s"
    value = float(f"{value:.2e}")
    # a damaged or absurd duration: no run of digits hundreds long
    if not 1e-12 <= abs(value) < 1e6:
        return f"{value:.2e} s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(value) >= scale:
            return f"{_significant(value / scale, 3)} {unit}"
    return f"{_significant(value / 1e-9, 3)} ns"


def pct(value) -> str:
    if is_missing(value):
        return ""
    value = float(value)
    # past any real share: no run of digits hundreds long
    if not _infinite(value) and abs(value) >= 1e6:
        return f"{value:.2e}%"
    return f"{_infinite(value) or f'{value:.1f}'}%"


def share(value) -> str:
    """A fraction as a percentage: 0.448 -> `44.8%` (efficiencies are stored as fractions)."""
    return "" if is_missing(value) else pct(100 * float(value))


def ratio(value) -> str:
    if is_missing(value):
        return ""
    if infinite := _infinite(float(value)):
        return infinite
    value = float(f"{float(value):.2e}")
    if value == 0 or abs(value) >= 1e4 or abs(value) < 1e-3:
        return f"{value:.3g}" if value == 0 else f"{value:.2e}"
    return _significant(value, 3)


def integer(value) -> str:
    if is_missing(value):
        return ""
    return _infinite(float(value)) or f"{int(value):,}"


def at_least(shown: str, lower_bound: bool) -> str:
    """`≥ 87.1 us` for a total that is only the known part of one (a launch ncu did not profile)."""
    return f"≥ {shown}" if shown and lower_bound else shown


def flagged(marker: object) -> bool:
    """A lower-bound marker (a flag, or a count of launches not profiled) that is set: missing is
    not."""
    return not is_missing(marker) and bool(marker)


def text(value) -> str:
    return "" if is_missing(value) else str(value)


def roof(value) -> str:
    """The ceiling that bounds a row: `compute`, `dram`, `l2`, `l1`, the words of the export's
    `roof` column and of the `bound:` filter, so that the table, the filter and the export read
    alike."""
    return "" if is_missing(value) or not value else str(value).lower()


def precision(value) -> str:
    """A `precision` label as tables show it: `tensor_fp16_acc16+tensor_fp16` -> `TC fp16/acc16+TC
    fp16` (TC: tensor cores; /acc16: accumulating in FP16), short enough to read whole at 80
    columns. SIMT labels (`fp64+fp32`) are already short; --json and exports keep the canonical
    label."""
    return (
        ""
        if is_missing(value)
        else "+".join(_precision_part(part) for part in str(value).split("+"))
    )


def ceiling(name: str) -> str:
    """A ceiling's or a peak's precision in headers and plots: `FP32`, `TC FP16/ACC16`, `DRAM`."""
    return precision(name).upper()


def _precision_part(part: str) -> str:
    if not part.startswith("tensor_"):
        return part
    dtype, _, acc = part.removeprefix("tensor_").partition("_acc")
    return f"TC {dtype}/acc{acc}" if acc else f"TC {dtype}"


def warning(value) -> str:
    """Why a sweep point's numbers may lie (its program failed, its report is partial), marked `!`
    as the findings are, in words: legible without colour. "" for a clean point."""
    return "" if is_missing(value) or not value else f"! {value}"


def when(epoch) -> str:
    """A Unix time as local `YYYY-MM-DD HH:MM`."""
    return (
        ""
        if is_missing(epoch)
        else dt.datetime.fromtimestamp(float(epoch)).strftime("%Y-%m-%d %H:%M")
    )


def params(values: dict) -> str:
    """Sweep parameters as typed on the command line: `batch_size=32 seq=128`."""
    return " ".join(f"{k}={v}" for k, v in values.items())


# A peak's source (a row's `peak_source`) as the roof it belongs to, in a few words.
PEAK_ROOFS = {
    "report": "at clock",
    "datasheet @ measured clock": "datasheet at clock",
    "datasheet": "datasheet",
    "measured on node": "measured",
}


def peak_roof(source) -> str:
    """`measured on node + report` -> `measured + at clock`: which roof(s) a % of peak is of; ""
    where none."""
    return " + ".join(PEAK_ROOFS.get(part, part) for part in text(source).split(" + ") if part)


_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(fraction: float, cells: int) -> str:
    """A horizontal bar `fraction` (0-1) of `cells` wide, in eighths of a cell: `█████▍`."""
    eighths = round(max(0.0, min(fraction, 1.0)) * cells * 8)
    whole, part = divmod(eighths, 8)
    return "█" * whole + (_EIGHTHS[part] if part else "")
