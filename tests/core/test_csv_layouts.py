"""The raw CSV page in every variant ncu prints, built around real launch values."""

from __future__ import annotations

import pytest
from flopscope.core import read_report

from ..conftest import fixture_path
from ..helpers.raw_csv import launches, raw_csv

VARIANTS = {
    "base units": {},
    "auto-scaled units": {"scaled": True},
    "thousands separators": {"thousands": True},
    "empty units cells": {"blank_units": True},
    "==PROF== lines mixed in": {"prof_lines": True},
}


@pytest.fixture
def real_rows():
    return launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_raw_variants_give_the_same_numbers(tmp_path, real_rows, variant):
    path = tmp_path / "raw.csv"
    path.write_text(raw_csv(real_rows, **VARIANTS[variant]))
    k = read_report(path).kernels
    assert len(k) == len(real_rows) == 11
    for (_, row), src in zip(k.iterrows(), real_rows, strict=True):
        assert row["dram_bytes"] == pytest.approx(src["dram__bytes.sum"], rel=1e-6)
        assert row["l2_bytes"] == pytest.approx(src["lts__t_bytes.sum"], rel=1e-6)
        assert row["l1_bytes"] == pytest.approx(src["l1tex__t_bytes.sum"], rel=1e-6)
        fp32 = [
            src[f"sm__sass_thread_inst_executed_op_f{op}_pred_on.sum"]
            for op in ("add", "mul", "fma")
        ]
        assert row["flop_fp32"] == pytest.approx(fp32[0] + fp32[1] + 2 * fp32[2])
        duration = src["sm__cycles_elapsed.avg"] / src["sm__cycles_elapsed.avg.per_second"]
        assert row["duration_s"] == pytest.approx(duration, rel=1e-6)
        assert row["grid"] == src["Grid Size"] and row["block"] == src["Block Size"]


def test_na_cells_become_missing_not_zero(tmp_path, real_rows):
    path = tmp_path / "raw.csv"
    path.write_text(raw_csv(real_rows, na_metric="dram__bytes.sum"))
    k = read_report(path).kernels
    assert k["dram_bytes"].isna().sum() == 1
    assert k["dram_bytes"].notna().sum() == 10


def test_hostile_kernel_names_processes_devices_and_nvtx(tmp_path, real_rows):
    names = [
        "void f<float, 2>(T1 *, int) [with T = float]",
        "k<\"quoted\", 'x'>(a, b)",
        "[bracketed], name",
    ]
    for row, name in zip(real_rows, names * 4, strict=False):
        row["Kernel Name"] = name
    real_rows[1]["Process ID"], real_rows[1]["Process Name"], real_rows[1]["Device"] = (
        "999",
        "other",
        "1",
    )
    nvtx = {
        "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg": [
            ' "<default domain>:forward:none:none:none:none:none:none" ',
            "",
        ]
    }
    path = tmp_path / "raw.csv"
    path.write_text(raw_csv(real_rows, extra_cols=nvtx))
    report = read_report(path)
    k = report.kernels
    assert list(k["kernel_full"][:3]) == names
    assert k.loc[1, "process"] == "other (999)" and k.loc[1, "device"] == 1
    assert k.loc[0, "nvtx"] == "forward" and k["nvtx"].isna().sum() == 5
    assert report.group("nvtx")["count"].sum() == 11
    assert len(report.group("name")) == 3
