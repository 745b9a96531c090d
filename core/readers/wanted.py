"""What every reader shares: the identity columns, the allow-list of ncu metrics (from
ncu_metrics.READ), and turning a column into Python values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..ncu.metrics import MODIFIER_METRIC, OPCODE_METRIC, is_read

__all__ = ["IDENTITY", "MODIFIER_METRIC", "OPCODE_METRIC", "objects", "wanted"]

# Identity columns every reader fills (besides ncu metric columns named as ncu names them).
IDENTITY = [
    "launch_id",
    "kernel_full",
    "kernel_base",
    "nvtx",
    "process",
    "device",
    "stream",
    "grid",
    "block",
    "registers",
    "gpu",
    "cc",
]
# the readers' allow-list of ncu metrics, kept in ncu_metrics beside the sets that collect them
wanted = is_read


def objects(col: pd.Series) -> np.ndarray:
    """A column as an object array of shared Python values, None where missing.

    Categorical text from the CSV parser keeps its categories in Arrow; `to_numpy` would build one
    new string per row (gigabytes for a million launches with kilobyte kernel names). Taking from
    the few categories shares them instead."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = np.asarray(col.cat.categories.to_numpy(dtype=object), dtype=object)
        codes = col.cat.codes.to_numpy()
        out = np.full(len(col), None, dtype=object)
        known = codes >= 0
        out[known] = cats[codes[known]]
        return out
    return np.array(col.to_numpy(dtype=object, na_value=None), dtype=object, copy=True)
