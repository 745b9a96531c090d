"""The one table of ncu metric names agrees with itself: what a set collects is read, what a column
is filled from is collected, and the "collect it with" hints name those metrics."""

from __future__ import annotations

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.catalogue import TENSOR_COUNTERS_BY_CC
from flopscope.core.ncu.metrics import COLUMN_METRICS, METRIC_SETS, ON_REQUEST, RATE_FORMS, is_read
from flopscope.core.table.columns import COLLECTED
from flopscope.core.table.counters import collecting

from ..helpers.raw_csv import one_launch

UNIT = {"gpu__": "nsecond", "dram__": "byte", "lts__": "byte", "l1tex__": "byte"}


@pytest.mark.parametrize("name", sorted(METRIC_SETS))
def test_every_metric_a_set_collects_is_read(name):
    assert [m for m in METRIC_SETS[name] if not is_read(m)] == []


def test_every_chips_tensor_counters_are_read():
    assert [m for ms in TENSOR_COUNTERS_BY_CC.values() for m in ms if not is_read(m)] == []


def test_every_counted_column_is_filled_from_collected_metrics():
    assert set(COLUMN_METRICS) == set(COLLECTED)
    in_a_set = {m for ms in METRIC_SETS.values() for m in ms}
    assert [m for ms in COLUMN_METRICS.values() for m in ms if m not in in_a_set | ON_REQUEST] == []
    assert [m for ms in COLUMN_METRICS.values() for m in ms if not is_read(m)] == []


@pytest.mark.parametrize("column", sorted(set(COLUMN_METRICS) - {"duration_s", "flop_tensor"}))
def test_a_columns_metrics_fill_it(tmp_path, column):
    # One launch holding only the duration and this column's metrics, valued 1, 2, 3...: the column
    # is known, and is the sum of its metrics with an FMA counted twice (fp16's counters count
    # 2-lane instructions).
    metrics = COLUMN_METRICS[column]
    cols = {"gpu__time_duration.sum": ("nsecond", 1000.0)}
    cols |= {
        m: (UNIT.get(m.split("__")[0] + "__", "inst"), float(k + 1)) for k, m in enumerate(metrics)
    }
    row = read_report(one_launch(tmp_path / "raw.csv", cols, cc="8.0")).kernels.iloc[0]
    weights = {"flop_fp16": [2, 2, 4]}.get(
        column, [1, 1, 2] if column.startswith("flop_") else [1] * len(metrics)
    )
    assert row[column] == sum(w * (k + 1) for k, w in enumerate(weights))


def test_the_hint_names_the_columns_metrics():
    hint = "ncu --metrics lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum"
    assert collecting(["l2_bytes", "dram_bytes"]) == hint


@pytest.mark.parametrize("column", sorted(RATE_FORMS))
def test_the_rate_form_of_a_columns_metrics_is_read_and_recognised(column):
    rates = [m + ".per_second" for m in COLUMN_METRICS[column]]
    assert all(is_read(m) and RATE_FORMS[column].match(m) for m in rates)
