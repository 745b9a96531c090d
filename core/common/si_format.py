"""Numbers for people: 3 significant digits and an SI prefix (`113 TFLOP/s`, `1.25 MB`). One
spelling for the tables, the headers and the warning lines core writes
(core/report/over_ceiling.py), so a number reads the same in each."""

from __future__ import annotations

import math
from typing import SupportsFloat, cast

from .units import is_missing

_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def infinite(value: float) -> str | None:
    """`∞` or `-∞` for an infinite value, else None."""
    return None if math.isfinite(value) else ("-∞" if value < 0 else "∞")


def si(value: object, unit: str = "", digits: int = 3) -> str:
    """1.2e12 -> '1.20 T' + unit: always `digits` significant digits, so a column reads at a glance;
    blank for missing values."""
    if is_missing(value):
        return ""
    number = float(cast(SupportsFloat, value))  # any table cell: not missing, so a number
    if infinite(number):
        return f"{infinite(number)} {unit}".rstrip()
    if number == 0:
        return f"0 {unit}".rstrip()
    # round first: 999.96e9 is '1.00 T', not '1.00e+03 G'
    rounded = float(f"{number:.{digits - 1}e}")
    # past the largest prefix (and 1.798e308, which rounds to inf)
    if abs(rounded) >= 1e21 or infinite(rounded):
        return f"{number:.{digits - 1}e} {unit}".rstrip()
    number = rounded
    for scale, prefix in _PREFIXES:
        if abs(number) >= scale:
            return f"{significant(number / scale, digits)} {prefix}{unit}".rstrip()
    # 12 B, not 12.0 B
    plain = str(int(number)) if number.is_integer() else significant(number, digits)
    return f"{plain} {unit}".rstrip()


def significant(value: float, digits: int) -> str:
    """`digits` significant digits in plain notation, trailing zeros kept (1.20, 12.0, 120,
    1200)."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"
