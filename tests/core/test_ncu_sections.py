"""ncu's own per-launch figures (speed of light, occupancy and its limiter, waves per SM, pipe
utilisation) kept as canonical columns: every reader's value equals the counter as ncu printed it,
read here another way (the csv module on a raw or details page, or `ncu --import --csv --page raw`
of a report)."""

from __future__ import annotations

import csv
import gzip
import io
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from flopscope.core import read_report

from ..conftest import fixture_path
from ..helpers.ncu_pages import ncu_csv

# the project's own capture
H100_CAPTURE = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"

# Canonical column -> the raw page's column (metric names as ncu prints them; not taken from
# flopscope).
RAW = {
    "sol_sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sol_memory_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sol_dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "sol_l2_pct": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sol_l1_pct": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "occupancy_achieved_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occupancy_theoretical_pct": "sm__maximum_warps_per_active_cycle_pct",
    "waves_per_sm": "launch__waves_per_multiprocessor",
    "pipe_fma_pct": "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "pipe_alu_pct": "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
    "pipe_tensor_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "pipe_uniform_pct": "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
}
# Blackwell's (CC 10.x) own pipes: the 5th-generation tensor core's (tcgen05 MMA) and tensor
# memory's.
BLACKWELL = {
    "pipe_tc_pct": "sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active",
    "pipe_tmem_pct": "sm__inst_executed_pipe_tmem.avg.pct_of_peak_sustained_active",
}
LIMITS = {
    "launch__occupancy_limit_registers": "registers",
    "launch__occupancy_limit_shared_mem": "shared memory",
    "launch__occupancy_limit_warps": "warps",
    "launch__occupancy_limit_blocks": "blocks",
    "launch__occupancy_limit_barriers": "barriers",
}


def raw_rows(text: str) -> list[dict[str, str]]:
    """A raw page's launch rows by column name (its `==PROF==` lines and units row left out)."""
    rows = list(
        csv.DictReader(
            io.StringIO(
                "".join(
                    line for line in text.splitlines(keepends=True) if not line.startswith("==")
                )
            )
        )
    )
    return rows[1:]  # the units row


def cell(text: str) -> tuple[float, float]:
    """A printed number and half a unit of its last printed digit (the CSV rounds: 12.20 is
    12.195-12.205)."""
    exponent = Decimal(text.replace(",", "")).as_tuple().exponent
    return float(text.replace(",", "")), 0.5 * 10.0 ** min(int(exponent), 0) + 1e-9


def check_against_raw(kernels, rows: list[dict[str, str]]) -> int:
    """Every canonical column against its raw cell, launch by launch; how many cells were
    compared."""
    by_id = {int(r["ID"]): r for r in rows}
    compared = 0
    for _, launch in kernels.iterrows():
        raw = by_id[int(launch["launch_id"])]
        for column, metric in {**RAW, **BLACKWELL}.items():
            if not raw.get(metric):
                assert np.isnan(launch[column]), (column, launch["launch_id"])
                continue
            value, tolerance = cell(raw[metric])
            assert abs(launch[column] - value) <= tolerance, (
                column,
                launch["launch_id"],
                launch[column],
                value,
            )
            compared += 1
        limits = {what: float(raw[m]) for m, what in LIMITS.items() if raw.get(m)}
        fewest = min(limits.values())
        assert set(launch["occupancy_limiter"].split(" + ")) == {
            w for w, v in limits.items() if v == fewest
        }
        assert launch["occupancy_limit_blocks"] == fewest
    return compared


def test_the_b200_raw_page_keeps_occupancy_waves_and_pipes_as_ncu_printed_them():
    path = fixture_path("b200_torch_sdpa_auto_raw.csv")
    kernels = read_report(path).kernels
    assert check_against_raw(kernels, raw_rows(path.read_text())) >= 16 * 5
    # The page has no speed-of-light columns: none are made up.
    assert kernels[["sol_sm_pct", "sol_memory_pct", "occupancy_achieved_pct"]].isna().all(axis=None)


def test_blackwell_pipes_are_read_where_the_file_has_them():
    """The B200 raw page's tcgen05, TMEM and uniform pipes, launch by launch as ncu printed them;
    the attention kernel's tcgen05 pipe is far busier than the mma.sync tensor pipe, so the tensor
    pipe alone would mislead."""
    path = fixture_path("b200_torch_sdpa_auto_raw.csv")
    rows = {int(r["ID"]): r for r in raw_rows(path.read_text())}
    kernels = read_report(path).kernels
    pipes = {**BLACKWELL, "pipe_uniform_pct": RAW["pipe_uniform_pct"]}
    for column, metric in pipes.items():
        expected = [float(rows[int(i)][metric]) for i in kernels["launch_id"]]
        np.testing.assert_allclose(kernels[column].to_numpy(float), expected, atol=0.005 + 1e-9)
    sdpa = kernels[kernels["kernel_full"].str.contains("sdpa")]
    assert len(sdpa) == 8 and (sdpa["pipe_tc_pct"] > 5 * sdpa["pipe_tensor_pct"]).all()


def test_a_hopper_report_has_no_blackwell_pipes():
    """H100 (CC 9.0): the uniform pipe is there, the tcgen05 and TMEM pipes are not, and are left
    empty."""
    path = H100_CAPTURE / "gemm_bf16_full.csv.gz"
    with gzip.open(path, "rt") as f:
        rows = raw_rows(f.read())
    assert not any(metric in rows[0] for metric in BLACKWELL.values())
    kernels = read_report(path).kernels
    assert check_against_raw(kernels, rows) == len(kernels) * len(RAW)
    assert kernels[list(BLACKWELL)].isna().all(axis=None)


def test_a_group_shows_the_time_weighted_mean_of_its_launches():
    path = fixture_path("b200_torch_sdpa_auto_raw.csv")
    rows = raw_rows(path.read_text())
    group = read_report(path).group("name")
    for _, row in group.iterrows():
        mine = [r for r in rows if r["Kernel Name"] == row["kernel_full"]]
        duration = np.array([float(r["gpu__time_duration.sum"]) for r in mine])
        fma = np.array([float(r[RAW["pipe_fma_pct"]]) for r in mine])
        assert row["count"] == len(mine) > 1
        assert row["pipe_fma_pct"] == pytest.approx(
            (fma * duration).sum() / duration.sum(), rel=1e-9
        )


@pytest.mark.parametrize(
    "report",
    [
        "h100pcie_ee384_cub_agents_full.ncu-rep",
        "a100pcie80_cutlass_gemm_full.ncu-rep",
        "t4_mlp_matadd_full.ncu-rep",
    ],
)
def test_a_full_set_report_reads_as_ncus_own_raw_page(real_ncu, report):
    path = fixture_path(report)
    page = ncu_csv(real_ncu, path)
    kernels = read_report(path).kernels
    assert kernels["sol_sm_pct"].notna().all() and kernels["occupancy_achieved_pct"].notna().all()
    assert check_against_raw(kernels, raw_rows(page)) >= len(kernels) * len(RAW) - len(kernels)


def test_a_details_page_reads_its_section_labels():
    """The details layout names them by ncu's section labels (Compute (SM) Throughput, Block Limit
    Warps)."""
    path = fixture_path("t4_nsightful_copy_blocked_details.csv")
    rows = [
        r
        for r in csv.DictReader(
            line for line in path.read_text().splitlines() if not line.startswith("==")
        )
        if r["Metric Name"]
    ]
    value = {
        (r["Section Name"], r["Metric Name"]): float(r["Metric Value"].replace(",", ""))
        for r in rows
        if r["Metric Value"].replace(",", "").replace(".", "").isdigit()
    }
    launch = read_report(path).kernels.iloc[0]
    sol = "GPU Speed Of Light Throughput"
    assert launch["sol_sm_pct"] == value[(sol, "Compute (SM) Throughput")]
    # the %, not the byte/s of its namesake
    assert launch["sol_memory_pct"] == value[(sol, "Memory Throughput")]
    assert launch["sol_dram_pct"] == value[(sol, "DRAM Throughput")]
    assert launch["sol_l2_pct"] == value[(sol, "L2 Cache Throughput")]
    assert launch["sol_l1_pct"] == value[(sol, "L1/TEX Cache Throughput")]
    assert launch["occupancy_achieved_pct"] == value[("Occupancy", "Achieved Occupancy")]
    assert launch["occupancy_theoretical_pct"] == value[("Occupancy", "Theoretical Occupancy")]
    assert launch["waves_per_sm"] == value[("Launch Statistics", "Waves Per SM")]
    limits = {
        label: value[("Occupancy", f"Block Limit {label}")]
        for label in ("SM", "Registers", "Shared Mem", "Warps")
    }
    assert launch["occupancy_limit_blocks"] == min(limits.values()) == limits["Warps"]
    assert launch["occupancy_limiter"] == "warps"
    # The byte/s "Memory Throughput" of the Memory Workload Analysis still gives the DRAM bandwidth.
    assert launch["dram_bytes_per_s"] == pytest.approx(
        value[("Memory Workload Analysis", "Memory Throughput")], rel=1e-3
    )


def test_a_stored_run_keeps_them_and_groups_them_as_the_file_does(tmp_path):
    from flopscope.core.store.run_store import Store

    report = read_report(fixture_path("b200_torch_sdpa_auto_raw.csv"))
    with Store(tmp_path / "s.db") as store:
        store.save(report, "b200")
        back = store.load("b200")
    columns = [*RAW, "occupancy_limit_blocks"]
    np.testing.assert_allclose(
        back.kernels[columns].to_numpy(float), report.kernels[columns].to_numpy(float)
    )
    assert (
        back.kernels["occupancy_limiter"].astype(str).tolist()
        == report.kernels["occupancy_limiter"].tolist()
    )
    np.testing.assert_allclose(
        back.group("name")[columns].to_numpy(float), report.group("name")[columns].to_numpy(float)
    )
