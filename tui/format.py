"""Numbers for people: SI prefixes, percentages, durations. Shared by the CLI tables and the app."""

from __future__ import annotations

import datetime as dt
import math

import pandas as pd

_PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def _missing(value) -> bool:
    # pd.NA: a missing value of a nullable integer column (device, stream, registers)
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def si(value, unit: str = "", digits: int = 3) -> str:
    """1.23e12 -> '1.23 T' + unit; blank for missing values."""
    if _missing(value):
        return ""
    value = float(value)
    if value == 0:
        return f"0 {unit}".rstrip()
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".rstrip()
    return f"{value:.{digits}g} {unit}".rstrip()


def seconds(value) -> str:
    if _missing(value):
        return ""
    value = float(value)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns" if value else "0 s"


def pct(value) -> str:
    return "" if _missing(value) else f"{float(value):.1f}%"


def ratio(value) -> str:
    if _missing(value):
        return ""
    value = float(value)
    return f"{value:.3g}" if abs(value) < 1e4 else f"{value:.2e}"


def integer(value) -> str:
    return "" if _missing(value) else f"{int(value):,}"


def text(value) -> str:
    return "" if _missing(value) else str(value)


def when(epoch) -> str:
    """A Unix time as local `YYYY-MM-DD HH:MM`."""
    return "" if _missing(epoch) else dt.datetime.fromtimestamp(float(epoch)).strftime("%Y-%m-%d %H:%M")


def params(values: dict) -> str:
    """Sweep parameters as typed on the command line: `batch_size=32 seq=128`."""
    return " ".join(f"{k}={v}" for k, v in values.items())
