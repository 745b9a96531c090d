"""Nsight Compute unit strings and number cells, converted to SI base units.

ncu auto-scales units per row (`Kbyte`, `Mbyte`, `usecond`, `Ghz`, `cycle/second`, `Gbyte/s`), so
every value is multiplied by the factor of its own unit before anything else sees it."""

from __future__ import annotations

import math
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIME = {
    "second": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "msecond": 1e-3,
    "ms": 1e-3,
    "usecond": 1e-6,
    "us": 1e-6,
    "nsecond": 1e-9,
    "ns": 1e-9,
}
_WORD = re.compile(r"^([KkMGTP]?)([A-Za-z%]+)$")


# A metric's base unit where it is not SI: a duration in nanoseconds. A report stores values in it,
# and ncu's CSV pages print values in it with the unit left blank when ncu does not know the GPU
# (the 2025 CLI importing an RTX 5060 Ti report leaves 263 of 272 metric units blank,
# gpu__time_duration.sum's among them).
_BASE_UNIT = (("__time_duration", "nsecond"),)


def is_missing(value: object) -> bool:
    """True for a cell with no value: None, pandas' NA (a nullable integer column's: device, stream,
    registers) or NaN (Python or numpy float). For a value sure to be a float, `math.isnan` says the
    same. (Without pandas imported no value can be its NA: `gpus` and `--version` start without
    it.)"""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    pandas = sys.modules.get("pandas")
    return pandas is not None and value is pandas.NA


class UnitError(Exception):
    """A metric's unit that ncu never prints for it (`gpu__time_duration.sum` in `Ghz`, `furlong`).
    Raised instead of guessing a factor: a wrong factor is a wrong number that looks right. The
    readers' entry point (`readers.read_metrics`) words it as a FlopscopeError naming the file."""

    def __init__(self, metric: str, unit: str, expected: str) -> None:
        self.metric, self.unit, self.expected = metric, unit, expected
        if unit.strip():
            super().__init__(f"{metric} is in unit {unit!r}, which is not {expected}")
        else:
            super().__init__(f"{metric} has no unit, where ncu prints {expected}")


def metric_unit_factor(metric: str, unit: str) -> float:
    """The factor to SI base units of `metric`'s value in `unit`, a blank unit being the metric's
    base unit (ns for a duration). Raises UnitError when the unit is unknown or measures something
    else than the metric (a time in bytes)."""
    unit = (unit or "").strip() or next((u for part, u in _BASE_UNIT if part in metric), "")
    return _checked_factor(_metric_dimension(metric), unit, metric)


def base_unit_factor(metric: str) -> float:
    """The factor to SI base units of `metric`'s value as a report stores it: in the metric's base
    unit."""
    return metric_unit_factor(metric, "")


@lru_cache(maxsize=1024)
def _checked_factor(dimension: str, unit: str, metric: str) -> float:
    kind = unit_dimension(unit)
    if kind not in _ACCEPTS[dimension]:
        raise UnitError(metric, unit, _EXPECTED[dimension])
    return unit_factor(unit)


@lru_cache(maxsize=512)
def unit_factor(unit: str) -> float:
    """Factor that turns a value in `unit` into SI base units (seconds, bytes, hertz, plain
    counts)."""
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
        # "Mbyte" is a prefixed byte, but "Minst"-like words only scale when the rest is a known
        # unit word.
        if prefix and word in _SCALABLE:
            return _PREFIX[prefix]
    return 1.0


# fmt: off
_SCALABLE = {
    "byte", "inst", "cycle", "sector", "request", "warp", "thread", "block", "op", "ops", "flop",
}
# fmt: on
# What ncu counts, as its units rows and reports name it (every fixture's and the H100 capture's
# units, plus the prefixed forms its auto-scaling prints). A word outside this list is refused, not
# read as a plain count.
# fmt: off
_COUNT_WORDS = _SCALABLE | {
    "1", "sectors", "requests", "warps", "threads", "blocks", "cycles", "register", "registers",
    "branches", "pass", "sample", "cluster", "SM", "instructions",
}
# fmt: on


def unit_dimension(unit: str) -> str | None:
    """What a unit measures: "time", "byte", "count", "percent", "rate" (per second: hz,
    cycle/second, 1/s), "byte-rate" (byte/s), "per-count" (inst/cycle, byte/cycle, register/thread)
    or "blank"; None when it is no unit ncu prints."""
    unit = (unit or "").strip()
    if not unit:
        return "blank"
    if unit == "%":
        return "percent"
    num, slash, den = unit.partition("/")
    top = _word_dimension(num.strip())
    if not slash:
        return top
    bottom = _word_dimension(den.strip())
    if bottom == "time" and top in ("count", "byte"):
        return "byte-rate" if top == "byte" else "rate"
    if bottom == "count" and top in ("count", "byte"):
        return "per-count"
    return None


def _word_dimension(word: str) -> str | None:
    if word in _TIME:
        return "time"
    if word[-2:].lower() == "hz" and word[:-2].upper() in ("", "K", "M", "G", "T"):
        return "rate"
    match = _WORD.match(word)
    if match and match.group(2) == "byte":
        return "byte"
    if word == "1" or (match and not match.group(1) and word in _COUNT_WORDS):
        return "count"
    if match and match.group(2) in _SCALABLE:
        return "count"
    return None


# What each kind of metric may be measured in. A blank unit is the base unit (bytes, counts, hertz,
# percent), which is SI for all but a duration (`metric_unit_factor` makes its blank nanoseconds
# first).
_ACCEPTS = {
    "time": {"time"},
    "byte": {"byte", "blank"},
    "byte-rate": {"byte-rate", "blank"},
    "rate": {"rate", "blank"},
    "percent": {"percent", "blank"},
    # ncu 2019-2021 print `inst` and `cycle` for these
    "per-cycle": {"per-count", "count", "byte", "blank"},
    "count": {"count", "per-count", "blank"},
}
_EXPECTED = {
    "time": "a time unit (ns, nsecond, us, usecond, ms, msecond, s, second)",
    "byte": "a byte unit (byte, Kbyte, Mbyte, Gbyte, Tbyte)",
    "byte-rate": "a byte rate unit (byte/s, byte/second, Gbyte/s, ...)",
    "rate": "a per-second unit (hz, Mhz, Ghz, cycle/second, cycle/nsecond, 1/s, sector/s)",
    "percent": "%",
    "per-cycle": "a per-cycle unit (inst/cycle, byte/cycle)",
    "count": "a count unit (inst, cycle, sector, register/thread, ...)",
}


def _metric_dimension(metric: str) -> str:
    """What an ncu metric measures, by its name (the kind `_ACCEPTS` checks its unit against)."""
    if "__time_duration" in metric:
        return "time"
    # sm__maximum_warps_per_active_cycle_pct
    if ".pct_of_peak" in metric or metric.endswith("_pct"):
        return "percent"
    if metric.endswith(".per_second"):
        return "byte-rate" if "_bytes" in metric else "rate"
    if metric.endswith((".peak_sustained", ".per_cycle_elapsed")):
        return "per-cycle"
    # __m_: crossbar traffic
    if re.match(r"^(dram__bytes|\w+__t_bytes|\w+__m_\w+_bytes)\w*\.sum$", metric):
        return "byte"
    return "count"


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
        value = float(text.replace(",", ""))
    except ValueError:
        return math.nan
    if not text.isascii():  # Python's float() reads "１２３" (fullwidth) and other scripts' digits
        raise NumberError(text)
    return value


class NumberError(ValueError):
    """A cell holding a number in digits other than 0-9, which no ncu writes: the file was edited or
    damaged. Refused, as a number read from it would be as silently taken as a wrong one."""

    def __init__(self, text: str) -> None:
        super().__init__(
            f"the cell {text[:40]!r} is a number in digits other than 0-9, which ncu never writes"
        )


def is_time_unit(unit: str) -> bool:
    return (unit or "").strip() in _TIME


def whole_numbers(col: pd.Series) -> pd.Series:
    """Ids and counts as nullable integers where every value is whole, whichever reader saw them
    (7.0 from a report, "7" from a CSV), so JSON and exports say 7 for both. ncu's "n/a" is missing;
    any other text (a grouped row's "(mixed)") leaves the column as it was rather than lose a
    value."""
    import numpy as np
    import pandas as pd

    # a million launches share a few labels: convert those
    if isinstance(col.dtype, pd.CategoricalDtype):
        labels = whole_numbers(pd.Series(np.asarray(col.cat.categories, dtype=object)))
        if labels.dtype != "Int64":
            return col
        return pd.Series(
            labels.array.take(col.cat.codes.to_numpy(), allow_fill=True), index=col.index
        )
    if (fast := _whole_text(col)) is not None:
        return fast
    numbers = pd.to_numeric(col, errors="coerce")
    lost = numbers.isna() & col.notna()
    if lost.any() and not all(str(v).strip() in ("", "n/a") for v in pd.unique(col[lost])):
        return col
    known = numbers.dropna().to_numpy(dtype=float)
    # Whole and within float64's exact integers (inf or 1e20 in a damaged Stream cell is no id to
    # cast).
    if (
        not (np.isfinite(known) & (np.abs(known) < 2.0**53)).all()
        or not (known == np.floor(known)).all()
    ):
        return col
    return numbers.astype("Int64")


def _whole_text(col: pd.Series) -> pd.Series | None:
    """`whole_numbers` of a text column whose every cell is an integer ("7", missing as None),
    parsed by Arrow in one cast: a launch id column has a distinct text per launch, which pandas'
    to_numeric parses one by one. None for anything else (a "7.0", an "n/a", a huge id), which the
    general path judges."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if not (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
        return None
    try:
        ints = pa.array(col, type=pa.string(), from_pandas=True).cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    values = ints.to_numpy(zero_copy_only=False)
    if ints.null_count:
        values = np.where(np.asarray(ints.is_null()), 0, values)
    # beyond float64's exact integers: as the general path, left as it is
    if (np.abs(values) >= 2**53).any():
        return None
    return pd.Series(
        pd.arrays.IntegerArray(values.astype(np.int64), np.asarray(ints.is_null())), index=col.index
    )
