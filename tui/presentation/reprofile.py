"""The ncu command that profiles one launch again, for a launch ncu recorded nothing for: the Kernel
screen and the details beside the Kernels table (the split) give this one advice."""

from __future__ import annotations

import shlex

import numpy as np
import pandas as pd

from ...core.common import is_missing
from ...core.table import function_name
from . import format as fmt


def _v(row: pd.Series, name: str):
    value = row.get(name)
    return None if is_missing(value) else value


def reprofile_advice(row: pd.Series, launches: pd.DataFrame | None = None) -> str:
    """What to collect for a launch ncu recorded nothing for: the ncu command that profiles it
    alone, with `--launch-skip` past the earlier launches of its function where `launches` (its
    report's) tells them."""
    earlier = earlier_launches(launches, row) if launches is not None else None
    return (
        "all of it: ncu recorded nothing for this launch; profile it again by putting this before "
        f"your program's command: {shlex.join(recollect_argv(row, earlier))}"
    )


def recollect_argv(row: pd.Series, earlier: int | None = None) -> list[str]:
    """The ncu arguments that profile this row's launch again: `-k` matches ncu's function name
    exactly (its default `--kernel-name-base function`: no namespace, template arguments or
    parameters), and `--launch-skip` passes the `earlier` launches of that function when their
    number is known."""
    name = function_name(fmt.text(_v(row, "kernel_full")) or fmt.text(_v(row, "kernel"))) or "NAME"
    skip = ["--launch-skip", str(earlier)] if earlier else []
    return ["ncu", "-k", name, *skip, "-c", "1"]


def earlier_launches(launches: pd.DataFrame, row: pd.Series) -> int | None:
    """How many launches in `launches` (a report's, in launch order) share `row`'s function name and
    come before it; None unless `row` is one launch of that report."""
    launch, full = _v(row, "launch_id"), _v(row, "kernel_full")
    if (
        launch is None
        or full is None
        or (_v(row, "count") or 1) != 1
        or "launch_id" not in launches
    ):
        return None
    names = launches["kernel_full"].astype("category")
    codes = names.cat.codes.to_numpy()
    ids = pd.to_numeric(launches["launch_id"], errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    own = names.cat.categories.get_indexer([full])[0]
    if own < 0 or not ((codes == own) & (ids == float(launch))).any():
        return None  # the row is not a launch of this report
    target = function_name(str(full))
    same = np.array([function_name(str(c)) == target for c in names.cat.categories] + [False])
    return int((same[codes] & (ids < float(launch))).sum())
