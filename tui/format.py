"""Numbers for people: SI prefixes, percentages, durations. Shared by the CLI tables and the app."""

from __future__ import annotations

import datetime as dt
import math

from flopscope.core.units import is_missing

_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def _infinite(value: float) -> str | None:
    return None if math.isfinite(value) else ("-∞" if value < 0 else "∞")


def si(value, unit: str = "", digits: int = 3) -> str:
    """1.2e12 -> '1.20 T' + unit: always `digits` significant digits, so a column reads at a glance;
    blank for missing values."""
    if is_missing(value):
        return ""
    value = float(value)
    if _infinite(value):
        return f"{_infinite(value)} {unit}".rstrip()
    if value == 0:
        return f"0 {unit}".rstrip()
    value = float(f"{value:.{digits - 1}e}")  # round first: 999.96e9 is '1.00 T', not '1.00e+03 G'
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{_significant(value / scale, digits)} {prefix}{unit}".rstrip()
    plain = str(int(value)) if value.is_integer() else _significant(value, digits)  # 12 B, not 12.0 B
    return f"{plain} {unit}".rstrip()


def seconds(value) -> str:
    if is_missing(value):
        return ""
    value = float(value)
    if _infinite(value):
        return f"{_infinite(value)} s"
    if value == 0:
        return "0 s"
    value = float(f"{value:.2e}")
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(value) >= scale:
            return f"{_significant(value / scale, 3)} {unit}"
    return f"{_significant(value / 1e-9, 3)} ns"


def _significant(value: float, digits: int) -> str:
    """`digits` significant digits in plain notation, trailing zeros kept (1.20, 12.0, 120, 1200)."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def pct(value) -> str:
    if is_missing(value):
        return ""
    return f"{_infinite(float(value)) or f'{float(value):.1f}'}%"


def share(value) -> str:
    """A fraction as a percentage: 0.448 -> `44.8%` (efficiencies are stored as fractions)."""
    return "" if is_missing(value) else pct(100 * float(value))


def ratio(value) -> str:
    if is_missing(value):
        return ""
    if _infinite(float(value)):
        return _infinite(float(value))
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


def text(value) -> str:
    return "" if is_missing(value) else str(value)


def roof(value) -> str:
    """The ceiling that bounds a row, as tables show it: `compute`, `DRAM`, `L2`, `L1`."""
    return "" if is_missing(value) or not value else ("compute" if value == "compute" else str(value).upper())


def precision(value) -> str:
    """A `precision` label as tables show it: `tensor_fp16_acc16+tensor_fp16` -> `TC fp16/acc16+TC fp16`
    (TC: tensor cores; /acc16: accumulating in FP16), short enough to read whole at 80 columns. SIMT labels
    (`fp64+fp32`) are already short; --json and exports keep the canonical label."""
    return "" if is_missing(value) else "+".join(_precision_part(part) for part in str(value).split("+"))


def ceiling(name: str) -> str:
    """A ceiling's or a peak's precision in headers and plots: `FP32`, `TC FP16/ACC16`, `DRAM`."""
    return precision(name).upper()


def _precision_part(part: str) -> str:
    if not part.startswith("tensor_"):
        return part
    dtype, _, acc = part.removeprefix("tensor_").partition("_acc")
    return f"TC {dtype}/acc{acc}" if acc else f"TC {dtype}"


def warning(value) -> str:
    """Why a sweep point's numbers may lie (its program failed, its report is partial), marked `!` as the
    findings are, in words: legible without colour. "" for a clean point."""
    return "" if is_missing(value) or not value else f"! {value}"


def when(epoch) -> str:
    """A Unix time as local `YYYY-MM-DD HH:MM`."""
    return "" if is_missing(epoch) else dt.datetime.fromtimestamp(float(epoch)).strftime("%Y-%m-%d %H:%M")


def params(values: dict) -> str:
    """Sweep parameters as typed on the command line: `batch_size=32 seq=128`."""
    return " ".join(f"{k}={v}" for k, v in values.items())
