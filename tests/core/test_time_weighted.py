"""A group's ceilings, clocks and ncu's percentages are its launches' means weighted by their time
(`grouping.WEIGHTED`): checked on every real file against the definition summed in Python
(math.fsum per group), and unchanged however many columns are converted and summed at a time."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from flopscope.core.table import grouping

from ..helpers.real_files import file_id, real_files, report_of

FILES = real_files()


def by_definition(x: np.ndarray, dur: np.ndarray) -> float:
    """The launches with a value and a known time: sum(value x time) / sum(time); with a value and
    no time, their plain mean; none with a value: unknown."""
    has = ~np.isnan(x)
    timed = has & (dur > 0)
    if timed.any():
        return math.fsum(x[timed] * dur[timed]) / math.fsum(dur[timed])
    return float(np.mean(x[has])) if has.any() else math.nan


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_each_groups_weighted_values_are_the_definitions(path) -> None:
    k = report_of(path).kernels
    rows = grouping.aggregate(k, "kernel_full")
    codes = pd.factorize(k["kernel_full"].astype(object).fillna(""))[0]
    dur = k["duration_s"].fillna(0.0).to_numpy(dtype=float)
    checked = 0
    for column in (c for c in grouping.WEIGHTED if c in k and k[c].notna().any()):
        x = k[column].astype(float).to_numpy(dtype=float, na_value=np.nan)
        want = [by_definition(x[codes == g], dur[codes == g]) for g in range(len(rows))]
        np.testing.assert_allclose(rows[column].to_numpy(float), want, rtol=1e-12, err_msg=column)
        checked += 1
    assert checked  # every real file has some ceiling per launch


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_the_columns_summed_at_a_time_change_no_value(path, monkeypatch) -> None:
    k = report_of(path).kernels
    whole = grouping.aggregate(k, "kernel_full")
    monkeypatch.setattr(grouping, "BLOCK_CELLS", 1)  # one column at a time
    pd.testing.assert_frame_equal(grouping.aggregate(k, "kernel_full"), whole, check_exact=True)
