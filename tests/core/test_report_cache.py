"""The finished-report cache: a report opened again (per --gpu) is the report read afresh, in every
field, without counting or deriving again; another --gpu, other engine code or a changed file each
read anew."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core.readers import table_cache
from flopscope.core.report import report as report_module
from flopscope.core.report.report import read_report

from ..helpers.real_files import file_id, real_files

FILES = real_files()


@pytest.fixture
def cache_on(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv(table_cache.NO_CACHE_ENV, raising=False)
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(table_cache, "MIN_REPORT_BYTES", 0)  # every real file, small ones too
    return tmp_path / "home" / "cache"


@pytest.fixture
def counted(monkeypatch) -> list:
    """Each call of count_kernels: made for a report read afresh, skipped for one from the cache."""
    calls = []
    real = report_module.count_kernels

    def counting(metrics):
        calls.append(len(metrics))
        return real(metrics)

    monkeypatch.setattr(report_module, "count_kernels", counting)
    return calls


def same_report(cached, fresh) -> None:
    # Parquet keeps every bit
    pd.testing.assert_frame_equal(cached.kernels, fresh.kernels, check_exact=True)
    assert cached.meta == fresh.meta
    assert cached.missing == fresh.missing
    assert cached.gpu == fresh.gpu and cached.gpus == fresh.gpus and cached.roof == fresh.roof


@pytest.mark.parametrize("path", [p for p in FILES if not p.name.endswith(".log")], ids=file_id)
def test_a_report_opened_again_is_the_report_read_afresh(path, cache_on, counted, monkeypatch):
    fresh = read_report(path, params={"n": 1})
    assert len(counted) == 1
    cached = read_report(path, params={"n": 1})
    assert len(counted) == 1, "the second open counted the launches again"
    same_report(cached, fresh)
    # (a group's time-weighted peaks may differ in the last bit: pandas sums a frame's columns in
    # another order when they come from Parquet as separate arrays)
    pd.testing.assert_frame_equal(
        cached.group("name"), fresh.group("name"), check_exact=False, rtol=1e-13
    )


def test_each_gpu_has_its_entry_and_other_code_reads_anew(cache_on, counted, monkeypatch):
    path = next(p for p in FILES if p.name == "rtx4090_torch_linear_sgemm.ncu-rep")
    own, l4 = read_report(path), read_report(path, gpu="l4")
    assert len(counted) == 2 and own.meta.gpu_database_key != l4.meta.gpu_database_key
    same_report(read_report(path, gpu="l4"), l4)
    same_report(read_report(path), own)
    assert len(counted) == 2
    monkeypatch.setattr(table_cache, "engine_code", lambda: "other engine code")
    same_report(read_report(path), own)
    assert len(counted) == 3


def test_a_cached_report_names_the_path_it_was_opened_by(cache_on, counted, tmp_path, monkeypatch):
    path = next(p for p in FILES if p.name == "rtx4090_torch_linear_sgemm.ncu-rep")
    read_report(path)
    link = tmp_path / "again.ncu-rep"
    link.symlink_to(path)
    again = read_report(link, params={"batch": 8})
    assert len(counted) == 1  # the same file: its entry
    assert again.meta.source == str(link) and again.meta.params == {"batch": 8}
    assert dataclasses.replace(again.meta, source=str(path), params={}) == read_report(path).meta
