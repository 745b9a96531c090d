"""The finished-report cache: a report opened again (per --gpu) is the report read afresh, in every
field, without counting or deriving again; another --gpu, other engine code or a changed file each
read anew."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core.readers import table_cache
from flopscope.core.report import report as report_module
from flopscope.core.report.report import read_report

from ..helpers.real_files import H100, file_id, real_files

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


def same_rows(cached: pd.DataFrame, made: pd.DataFrame) -> None:
    """Every bit, dtype and cell type (a group's one value beside `(mixed)`, NVTX range lists)."""
    pd.testing.assert_frame_equal(cached, made, check_exact=True)
    assert list(cached.columns) == list(made.columns)
    assert list(cached.dtypes) == list(made.dtypes) and cached.attrs == made.attrs
    for name in [c for c in made.columns if made[c].dtype == object]:
        assert list(map(type, cached[name])) == list(map(type, made[name])), name


GROUPED = ("name", "nvtx")


@pytest.mark.parametrize("path", [p for p in FILES if not p.name.endswith(".log")], ids=file_id)
def test_a_report_opened_again_is_its_first_open_groupings_included(
    path, cache_on, counted, aggregated
):
    first = read_report(path, params={"n": 1})
    made = {by: first.group(by) for by in GROUPED}
    assert len(counted) == 1 and len(aggregated) == len(GROUPED)
    again = read_report(path, params={"n": 1})
    assert len(counted) == 1, "the second open counted the launches again"
    same_report(again, first)
    for by in GROUPED:
        same_rows(again.group(by), made[by])
        same_rows(again.view(by, sort="flop"), first.view(by, sort="flop"))
    assert len(aggregated) == len(GROUPED), "a cached open grouped the launches again"


# the H100 transformer step's raw page: launches in NVTX ranges, and only a finished report's entry
STEP = H100 / "train_transformer_bs8.csv.gz"


def _group_entries(cache: Path, before: set[Path]) -> list[Path]:
    return sorted(set(cache.glob("*.parquet")) - before)


def test_a_report_entry_written_again_leaves_its_old_groupings_unused(cache_on, aggregated):
    """A grouped table names the writing of the report entry it was made from: the entry replaced
    (here removed, as eviction or a damaged entry would), the old grouping is never read."""
    read_report(STEP)
    (entry,) = cache_on.glob("*.parquet")
    made = read_report(STEP).group("name")
    (grouped,) = _group_entries(cache_on, {entry})
    entry.unlink()
    again = read_report(STEP)  # writes the entry again
    same_rows(again.group("name"), made)
    assert aggregated == ["kernel_full", "kernel_full"]
    assert grouped.exists()  # rewritten for the new entry, and read from now on
    same_rows(read_report(STEP).group("name"), made)
    assert len(aggregated) == 2


def test_a_grouping_moved_over_another_is_not_handed_back(cache_on, aggregated):
    first = read_report(STEP)
    before = set(cache_on.glob("*.parquet"))
    by_name = first.group("name")
    (name_entry,) = _group_entries(cache_on, before)
    by_range = first.group("nvtx")
    (range_entry,) = _group_entries(cache_on, before | {name_entry})
    os.replace(range_entry, name_entry)  # the NVTX grouping under the name grouping's name
    same_rows(read_report(STEP).group("name"), by_name)
    assert aggregated == ["kernel_full", "nvtx", "kernel_full"]
    same_rows(read_report(STEP).group("nvtx"), by_range)  # made again: it was moved away
    assert aggregated[-1] == "nvtx"


def test_a_damaged_grouping_is_never_used(cache_on, aggregated):
    """A byte changed anywhere in a grouped table's entry (a number, a column's name or type, the
    report entry's id): the grouping is made afresh, never read as it is."""
    first = read_report(STEP)
    before = set(cache_on.glob("*.parquet"))
    made = first.group("name")
    (grouped,) = _group_entries(cache_on, before)
    whole = grouped.read_bytes()
    for at in [*range(0, len(whole), max(1, len(whole) // 30)), len(whole) - 1]:  # every region
        damaged = bytearray(whole)
        damaged[at] ^= 0x5A
        grouped.write_bytes(bytes(damaged))
        aggregated.clear()
        same_rows(read_report(STEP).group("name"), made)
        assert aggregated == ["kernel_full"], f"byte {at} of {len(whole)} changed, and read"
        grouped.write_bytes(whole)
    for damage in (whole[:-1], whole[:100], b"PAR1 no table PAR1", b""):
        grouped.write_bytes(damage)
        aggregated.clear()
        same_rows(read_report(STEP).group("name"), made)
        assert aggregated == ["kernel_full"]


def test_a_report_judged_otherwise_groups_afresh(cache_on, aggregated):
    """Only the launches as read_report made them use the kept groupings: judged against another
    roof, or a subset of them, a report groups its own rows."""
    from flopscope.core.table.roofline import Roof

    first = read_report(STEP)
    first.group("name")
    entries = set(cache_on.glob("*.parquet"))
    again = read_report(STEP)
    datasheet = again.against(Roof("datasheet"))
    pd.testing.assert_frame_equal(
        datasheet.group("name"),
        read_report(STEP, params={}).against(Roof("datasheet")).group("name"),
    )
    assert aggregated == ["kernel_full"] * 3
    some = again.only(again.kernels["duration_s"] > again.kernels["duration_s"].median())
    assert some.group("name")["count"].sum() == len(some.kernels)
    assert len(aggregated) == 4 and set(cache_on.glob("*.parquet")) == entries
