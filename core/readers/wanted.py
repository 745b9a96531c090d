"""Which ncu metrics the engine reads; everything else in a report is skipped for speed."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

OPCODE_METRIC = "sass__thread_inst_executed_true_per_opcode"  # instanced: one value per SASS opcode
MODIFIER_METRIC = OPCODE_METRIC + "_with_modifier_all"  # the same per opcode and modifiers (HFMA2.MMA)
# Identity columns every reader fills (besides ncu metric columns named as ncu names them).
IDENTITY = ["launch_id", "kernel_full", "kernel_base", "nvtx", "process", "device", "stream", "grid",
            "block", "registers", "gpu", "cc"]

WANTED = re.compile(
    r"^(?:gpu__time_duration\.(?:sum|avg)"
    r"|sm(?:sp)?__sass_thread_inst_executed_op_[dfh](?:add|mul|fma)_pred_on\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?"
    r"|sm(?:sp)?__cycles_elapsed\.avg(?:\.per_second)?"
    r"|sm__ops_path_tensor_src_\w+?(?:\.sum)?"
    r"|sm(?:sp)?__inst_executed_pipe_tensor(?:_op_\w+)?\.sum"
    r"|dram__bytes(?:_op)?(?:_read|_write)?\.sum(?:\.per_second|\.peak_sustained)?"
    r"|dram__cycles_elapsed\.avg\.per_second"
    r"|(?:lts|l1tex)__t_(?:bytes|sectors)\.sum(?:\.per_second|\.peak_sustained)?"
    r"|(?:lts|l1tex)__t_sectors\.(?:sum|avg)\.pct_of_peak_sustained_elapsed"
    r"|(?:lts|l1tex)__cycles_elapsed\.avg\.per_second"
    r"|derived__sm__sass_thread_inst_executed_op_[dfh]fma_pred_on_x[24]"
    r"|sass__thread_inst_executed_true_per_opcode(?:_with_modifier_all)?"
    r"|sm__inst_executed_pipe_tensor\w*\.avg\.pct_of_peak_sustained_active"
    r"|sm__pipe_tensor\w*cycles_active\.avg\.pct_of_peak_sustained_active"
    r"|launch__(?:grid_dim_[xyz]|block_dim_[xyz]|registers_per_thread|stream_id|device_id|block_size|grid_size)"
    r"|device__attribute_(?:display_name|compute_capability_major|compute_capability_minor|multiprocessor_count))$"
)


def wanted(name: str) -> bool:
    return bool(WANTED.match(name))


def objects(col: pd.Series) -> np.ndarray:
    """A column as an object array of shared Python values, None where missing.

    Categorical text from the CSV parser keeps its categories in Arrow; `to_numpy` would build one new
    string per row (gigabytes for a million launches with kilobyte kernel names). Taking from the few
    categories shares them instead.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = np.asarray(col.cat.categories.to_numpy(dtype=object), dtype=object)
        codes = col.cat.codes.to_numpy()
        out = np.full(len(col), None, dtype=object)
        known = codes >= 0
        out[known] = cats[codes[known]]
        return out
    return np.array(col.to_numpy(dtype=object, na_value=None), dtype=object, copy=True)
