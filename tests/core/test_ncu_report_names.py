"""The ncu_report path decides which metrics it reads once per report (per distinct list of metric
names), not for every name of every launch: a 100k-launch report repeats one list 100k times."""

from __future__ import annotations

import pandas as pd
from flopscope.core.readers import ncu_rep

from ..conftest import fixture_path


def test_wanted_is_asked_once_per_metric_name_and_the_table_is_unchanged(monkeypatch):
    path = fixture_path("rtx5060ti_transpose_45k_basic.ncu-rep")
    asked: list[str] = []
    real = ncu_rep.wanted
    monkeypatch.setattr(ncu_rep, "wanted", lambda name: asked.append(name) or real(name))
    frame, _ = ncu_rep._read_with_ncu_report(path)
    assert len(frame) > 1
    assert len(asked) == len(set(asked))  # each name once, however many launches hold it
    monkeypatch.setattr(ncu_rep, "wanted", real)
    stream = ncu_rep.read_table(path)
    pd.testing.assert_series_equal(
        frame["gpu__time_duration.sum"].astype(float),
        stream["gpu__time_duration.sum"].astype(float),
        check_names=False,
    )
