"""Columns of the canonical table held to NVIDIA's own reading of a report: for every launch, each
column equals the value ncu_report gives its metric, and is empty where ncu_report has none."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pytest

from .accounting import counter, report_actions
from .cli import launches_json


def measured(value) -> bool:
    """A value ncu_report measured: not absent, not NaN."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def assert_columns_are_ncu_reports(path: Path, metrics: Mapping[str, str]) -> None:
    """`report PATH --by launch --json`'s `column` against ncu_report's `metric`, launch by launch
    (`metrics`: {column: metric}); at least 10 columns measured per launch, so that a report the
    reader left empty cannot pass."""
    rows, actions = launches_json(path), report_actions(path)
    assert len(rows) == len(actions)
    compared = 0
    for row, action in zip(rows, actions, strict=True):
        for column, metric in metrics.items():
            value = counter(action, metric)
            if measured(value):
                assert row[column] == pytest.approx(value, rel=1e-12), column
                compared += 1
            else:
                assert row.get(column) is None, column
    assert compared >= len(rows) * 10
