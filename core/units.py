"""Nsight Compute unit strings and number cells, converted to SI base units.

ncu auto-scales units per row (`Kbyte`, `Mbyte`, `usecond`, `Ghz`, `cycle/second`, `Gbyte/s`), so every value
is multiplied by the factor of its own unit before anything else sees it.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
import pandas as pd

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIME = {
    "second": 1.0, "s": 1.0, "sec": 1.0,
    "msecond": 1e-3, "ms": 1e-3,
    "usecond": 1e-6, "us": 1e-6,
    "nsecond": 1e-9, "ns": 1e-9,
}
_WORD = re.compile(r"^([KkMGTP]?)([A-Za-z%]+)$")


# Units ncu uses for a metric when the report or CSV leaves the unit blank (an ncu importing a report from a
# newer GPU than it knows prints no units at all); a blank duration read as seconds would be off by 1e9.
_BLANK_UNIT = (("__time_duration", "nsecond"),)


def is_missing(value: object) -> bool:
    """True for a cell with no value: None, pandas' NA (a nullable integer column's: device, stream, registers)
    or NaN (Python or numpy float). For a value sure to be a float, `math.isnan` says the same."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def metric_unit_factor(metric: str, unit: str) -> float:
    """unit_factor, with ncu's base unit assumed for a metric whose unit is blank."""
    if not (unit or "").strip():
        unit = next((u for part, u in _BLANK_UNIT if part in metric), "")
    return unit_factor(unit)


@lru_cache(maxsize=512)
def unit_factor(unit: str) -> float:
    """Factor that turns a value in `unit` into SI base units (seconds, bytes, hertz, plain counts)."""
    unit = (unit or "").strip()
    if not unit:
        return 1.0
    num, _, den = unit.partition("/")
    factor = _part_factor(num)
    if den:
        factor /= _part_factor(den)
    return factor


def _part_factor(part: str) -> float:
    part = part.strip()
    if part in _TIME:
        return _TIME[part]
    if part.lower().endswith("hz"):
        return _PREFIX.get(part[:-2].upper() if part[:-2] else "", 1.0)
    match = _WORD.match(part)
    if match and match.group(2) not in _TIME:
        prefix, word = match.groups()
        # "Mbyte" is a prefixed byte, but "Minst"-like words only scale when the rest is a known unit word.
        if prefix and word in _SCALABLE:
            return _PREFIX[prefix]
    return 1.0


_SCALABLE = {"byte", "inst", "cycle", "sector", "request", "warp", "thread", "block", "op", "ops", "flop"}

_NA = {"", "n/a", "N/A", "nan", "NaN", "-", "(null)"}


def parse_number(cell: str | float | int | None) -> float:
    """A numeric cell ('1,234.50', '12', 'n/a', '') as float; NaN when it holds no number."""
    if cell is None:
        return math.nan
    if isinstance(cell, (int, float)):
        return float(cell)
    text = cell.strip()
    if text in _NA:
        return math.nan
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return math.nan


def is_time_unit(unit: str) -> bool:
    return (unit or "").strip() in _TIME


def whole_numbers(col: pd.Series) -> pd.Series:
    """Ids and counts as nullable integers where every value is whole, whichever reader saw them (7.0 from a
    report, "7" from a CSV), so JSON and exports say 7 for both. ncu's "n/a" is missing; any other text (a
    grouped row's "(mixed)") leaves the column as it was rather than lose a value."""
    if isinstance(col.dtype, pd.CategoricalDtype):  # a million launches share a few labels: convert those
        labels = whole_numbers(pd.Series(np.asarray(col.cat.categories, dtype=object)))
        if labels.dtype != "Int64":
            return col
        return pd.Series(labels.array.take(col.cat.codes.to_numpy(), allow_fill=True), index=col.index)
    numbers = pd.to_numeric(col, errors="coerce")
    lost = numbers.isna() & col.notna()
    if lost.any() and not all(str(v).strip() in ("", "n/a") for v in pd.unique(col[lost])):
        return col
    known = numbers.dropna()
    if not (known == np.floor(known)).all():
        return col
    return numbers.astype("Int64")
