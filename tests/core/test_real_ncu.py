"""flopscope against the real ncu CLI, for what ncu does without a GPU: parse flopscope's arguments,
and re-print shared reports as raw CSV pages (`--import`), which must read to the same numbers as
the reports."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from flopscope.core import read_report
from flopscope.core.ncu.command import ProfileOptions, import_raw_argv, ncu_argv

from ..conftest import fixture_path
from ..helpers.real_files import report_of

REPORTS = [
    "t4_mlp_matadd_full.ncu-rep",
    "v100_ncar_miniweather_fp64_full.ncu-rep",
    "a100pcie80_cutlass_gemm_full.ncu-rep",
    "h100pcie_ee384_cub_agents_full.ncu-rep",
    "h800_sglang_flashattn_full.ncu-rep",
    "rtx4090_torch_linear_sgemm.ncu-rep",
    "rtx5060ti_transpose_45k_basic.ncu-rep",
    "a10_spyinfer_linear_105k_basic.ncu-rep",
]
EXACT = ["duration_s", "dram_bytes", "l2_bytes", "l1_bytes", "flop_tensor"]
# Counts ncu stores as per-cycle rates: the CSV prints the rate rounded (e.g. 1427.98), so the count
# read from it differs from the report's by up to ~1e-3 (measured worst: 7.6e-4, H100 cub agents
# FP32).
FROM_RATES = ["flop_fp64", "flop_fp32", "flop_fp16"]


def test_ncu_accepts_every_option_flopscope_passes(real_ncu, tmp_path):
    opts = ProfileOptions(
        command=["/bin/true", "--", "x"],
        metrics="roofline",
        kernel_name="regex:gemm",
        nvtx_include=["fwd/"],
        launch_skip=1,
        launch_count=2,
        replay_mode="kernel",
        clock_control="none",
        target_processes="all",
        tensor_metrics=["sm__ops_path_tensor_src_fp16.sum"],
    )
    argv = ncu_argv(opts, str(tmp_path / "r"))
    out = subprocess.run([*real_ncu, *argv[1:]], capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    assert (
        "unrecognised option" not in text
        and "ambiguous" not in text
        and "invalid" not in text.lower()
    ), text
    # Without a GPU ncu stops at the driver, after its argument parsing.
    assert "driver" in text.lower() or "No kernels were profiled" in text, text


@pytest.mark.parametrize("given", ["--expo", "--metr", "--nvtx-inc", "--launch-co", "--print-su"])
def test_ncu_reads_an_options_beginning_as_flopscope_resolves_it(real_ncu, given):
    """Without its value ncu names the option it took the abbreviation for: the one --ncu-args
    checks refuse."""
    from flopscope.core.ncu.command import resolve_long

    out = subprocess.run([*real_ncu, given], capture_output=True, text=True, timeout=60)
    assert f"option '{resolve_long(given)}' is missing" in out.stdout + out.stderr
    assert resolve_long(given) != given


def test_double_dash_is_refused_by_ncu(real_ncu):
    out = subprocess.run(
        [*real_ncu, "--metrics", "gpu__time_duration.sum", "--", "/bin/true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "option is ambiguous" in out.stdout + out.stderr


def _page(real_ncu, tmp_path, argv):
    out = subprocess.run([*real_ncu, *argv], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    page = tmp_path / "page.csv"
    page.write_text(out.stdout)
    return read_report(page).kernels


def _same(from_rep, from_csv, columns, rtol):
    assert len(from_csv) == len(from_rep)
    assert list(from_csv["kernel"].astype(str)) == list(from_rep["kernel"].astype(str))
    for col in columns:
        a, b = from_rep[col].to_numpy(float), from_csv[col].to_numpy(float)
        assert np.allclose(a, b, rtol=rtol.get(col, 1e-9), equal_nan=True), (col, a[:3], b[:3])


@pytest.mark.parametrize("name", REPORTS)
def test_raw_page_reads_like_the_report(real_ncu, tmp_path, name):
    report = fixture_path(name)
    from_csv = _page(real_ncu, tmp_path, import_raw_argv("ncu", str(report))[1:])
    from_rep = report_of(report).kernels
    _same(from_rep, from_csv, EXACT + FROM_RATES, dict.fromkeys(FROM_RATES, 1e-3))
    # NVTX labels agree
    assert list(from_csv["nvtx"].fillna("")) == list(from_rep["nvtx"].fillna(""))


@pytest.mark.parametrize("name", REPORTS)
def test_raw_page_in_auto_units_reads_like_the_report(real_ncu, tmp_path, name):
    """ncu's own unit strings (usecond, Kbyte, Gbyte/second, ...) scale right. Auto units print
    about three significant digits, hence the tolerance (measured worst: 0.5%, a 58.304 us kernel
    printed as 58.30)."""
    report = fixture_path(name)
    from_csv = _page(
        real_ncu,
        tmp_path,
        [
            "--import",
            str(report),
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "auto",
            "--print-metric-instances",
            "details",
        ],
    )
    columns = ["duration_s", "dram_bytes", "l2_bytes", "l1_bytes", "flop_fp64", "flop_fp32"]
    _same(report_of(report).kernels, from_csv, columns, dict.fromkeys(columns, 1e-2))


@pytest.mark.parametrize("name", REPORTS)
def test_details_page_reads_like_the_report(real_ncu, tmp_path, name):
    """ncu's details page (the layout `ncu --csv` prints while profiling) shows only what the
    report's sections display: every launch, and durations where a section shows them (Speed of
    Light), must agree."""
    report = fixture_path(name)
    from_csv = _page(
        real_ncu,
        tmp_path,
        ["--import", str(report), "--csv", "--page", "details", "--print-units", "base"],
    )
    from_rep = report_of(report).kernels
    assert len(from_csv) == len(from_rep)
    shown = from_csv["duration_s"].notna().to_numpy()
    assert np.allclose(
        from_csv["duration_s"].to_numpy(float)[shown],
        from_rep["duration_s"].to_numpy(float)[shown],
        rtol=1e-9,
    )
    # These sets include Speed of Light, hence a duration for every profiled launch; but ncu 2024.1
    # shows no section of an RTX 5060 Ti (a GPU newer than it), only the command-line metrics.
    if ("basic" in name or "full" in name) and "rtx5060ti" not in name:
        assert (shown == from_rep["duration_s"].notna().to_numpy()).all()
