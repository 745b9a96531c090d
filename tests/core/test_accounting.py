"""FLOP and byte accounting against independent computations: analytic counts and the raw
counters."""

from __future__ import annotations

import csv
import json
import math
import re

import ncu_report
import pandas as pd
import pytest
from flopscope.core import Report, all_gpus, read_report

from ..conftest import fixture_path
from ..helpers.accounting import SIMT, counter, fp32_only, rate_flops, report_actions
from ..helpers.cli import CLI, run_cli
from ..helpers.raw_csv import one_launch
from ..helpers.real_files import report_of


def _details_cells(path, metric):
    """(launch ID, value) for `metric` straight from the CSV cells, parsed here without the
    engine."""
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    col = {h: k for k, h in enumerate(rows[0])}
    return [
        (int(r[0]), float(r[col["Metric Value"]].replace(",", "")))
        for r in rows[1:]
        if len(r) > col["Metric Value"] and r[col["Metric Name"]] == metric
    ]


def test_t4_matrix_add_is_exactly_one_million_fp32_flops():
    """1000x1000 matrix add, full-set report: only per-cycle rates, count = rate x elapsed
    cycles."""
    report = report_of(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    row = report.kernels.iloc[0]
    assert row["flop_fp32"] == pytest.approx(1000 * 1000, rel=1e-9)
    assert row["flop_fp64"] == 0 and row["flop_fp16"] == 0 and row["flop_tensor"] == 0
    assert row["flop"] == pytest.approx(1e6, rel=1e-9)
    assert "flop_fp32 derived from rates" in row["provenance"]
    assert row["estimated"] == ""  # converted rates are exact, not estimates


def test_rates_without_cycle_counts_use_clock_times_duration():
    """H100 report without smsp__cycles_elapsed.avg: cycles = its per-second form x
    gpu__time_duration."""
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    report = report_of(path)
    for action, (_, row) in zip(report_actions(path), report.kernels.iterrows(), strict=True):
        clock = counter(action, "smsp__cycles_elapsed.avg.per_second")
        cycles = clock * counter(action, "gpu__time_duration.sum") * 1e-9
        expected = {}
        for p, letter in (("fp64", "d"), ("fp32", "f")):
            names = {
                op: f"smsp__sass_thread_inst_executed_op_{letter}{op}_pred_on.sum.per_cycle_elapsed"
                for op in ("add", "mul", "fma")
            }
            rate = {op: counter(action, name) for op, name in names.items()}
            expected[p] = (rate["add"] + rate["mul"] + 2 * rate["fma"]) * cycles
        assert row["flop_fp64"] == pytest.approx(expected["fp64"], rel=1e-9, abs=1e-6)
        assert row["flop_fp32"] == pytest.approx(expected["fp32"], rel=1e-9, abs=1e-6)
    assert report.kernels["flop"].gt(1e8).any()  # fill_vector does real FP64/FP32 work


def test_derived_x2_metrics_are_peaks_not_counts():
    """`derived__*_x2` in full-set reports is the device's per-cycle peak: A100 = 108 SMs x 64 x
    2."""
    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    report = report_of(path)
    action = report_actions(path)[0]
    assert (
        counter(action, "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2") == 108 * 64 * 2
    )
    clock = counter(action, "sm__cycles_elapsed.avg.per_second")
    row = report.kernels.iloc[0]
    # The report's FP32 ceiling; the kernel itself (an INT8 GEMM) is judged by no FLOP ceiling.
    assert row["report_peak_fp32_flop_per_s"] == pytest.approx(108 * 64 * 2 * clock, rel=1e-9)
    assert (
        report.ceilings()[0].name == "fp32"
        and report.ceilings()[0].source == "report counters x measured clock"
    )
    assert row["flop_fp32"] < 1e9  # never the peak mistaken for a count


def test_per_opcode_sass_counts_give_simt_flops():
    path = fixture_path("rtx4090_torch_linear_sgemm.ncu-rep")
    report = report_of(path)
    for action, (_, row) in zip(report_actions(path), report.kernels.iterrows(), strict=True):
        metric = action.metric_by_name("sass__thread_inst_executed_true_per_opcode")
        ids = metric.correlation_ids()
        ops = {ids.as_string(j): metric.as_uint64(j) for j in range(metric.num_instances())}
        expected = ops.get("FADD", 0) + ops.get("FMUL", 0) + 2 * ops.get("FFMA", 0)
        assert row["flop_fp32"] == expected
        assert row["flop_tensor"] == 0  # no MMA opcode executed


def test_volta_tensor_estimate_matches_two_mnk():
    """CUTLASS FP16 GEMM of 20480^3 on V100 (the app's own printout): tensor FLOPs = 2*M*N*K."""
    path = fixture_path("v100_cutlass_gemm_nersc_flops_details.csv")
    report = report_of(path)
    gemms = report.kernels[report.kernels["kernel"].str.startswith("cutlass::Kernel")]
    assert len(gemms) == 7
    assert (gemms["flop_tensor"] == 2 * 20480**3).all()
    assert (gemms["flop_tensor_fp16"] == 2 * 20480**3).all()
    assert (
        gemms["estimated"]
        == "flop_tensor (tensor instructions x 512 FLOP/instruction, checked on Volta "
        "HMMA.884 with FP32 accumulate only)"
    ).all()
    assert (gemms["precision"] == "tensor_fp16").all()
    # duration from cycles / clock, since the file has no gpu__time_duration
    cycles = dict(_details_cells(path, "sm__cycles_elapsed.avg"))
    clock = dict(_details_cells(path, "sm__cycles_elapsed.avg.per_second"))
    for _, row in gemms.iterrows():
        launch = int(row["launch_id"])
        assert row["duration_s"] == pytest.approx(cycles[launch] / clock[launch], rel=1e-12)


def test_counted_tensor_ops_and_auto_scaled_bytes():
    path = fixture_path("rtx5090_dsocr_cutlass_gemm_details.csv")
    report = read_report(path, gpu="NVIDIA GeForce RTX 5090")
    row = report.kernels.iloc[0]
    assert row["flop_tensor"] == 45_902_462_976
    assert row["flop_tensor_bf16"] == 45_902_462_976
    assert row["estimated"] == ""
    assert row["dram_bytes"] == pytest.approx(63.77e6 + 197.38e3)
    assert row["precision"] == "tensor_bf16"
    # judged against the BF16 tensor ceiling, not FP32 (datasheet, scaled to the measured 2.00 GHz
    # clock)
    bf16 = report.gpu.peak("tensor_bf16") * 2.00e9 / report.gpu.boost_clock_hz
    assert row["peak_flop_per_s"] == pytest.approx(bf16, rel=1e-9)
    assert row["pct_of_peak"] == pytest.approx(
        100 * row["flop"] / row["duration_s"] / bf16, rel=1e-9
    )


def _simt_from_cells(path, launch: int) -> dict[str, float]:
    """add + mul + 2 x fma per precision (half: x2, two lanes) of one launch, from the CSV cells."""
    inst = {
        letter + op: dict(
            _details_cells(path, f"smsp__sass_thread_inst_executed_op_{letter}{op}_pred_on.sum")
        )[launch]
        for letter in "dfh"
        for op in ("add", "mul", "fma")
    }
    return {
        p: (
            (2 if letter == "h" else 1)
            * (inst[letter + "add"] + inst[letter + "mul"] + 2 * inst[letter + "fma"])
        )
        for p, letter in (("fp64", "d"), ("fp32", "f"), ("fp16", "h"))
    } | {"hfma": inst["hfma"]}


def test_an_sgemm_whose_tensor_pipe_ran_only_register_moves_counts_its_fp32_flops():
    """gemm_v0<float>, a naive FP32 SGEMM on an A100: 104,857,600 tensor-pipe warp instructions x 32
    = 3,355,443,200 = its HFMA thread instructions, exactly. Every tensor-pipe instruction was an
    HFMA2.MMA register move (ncu counts it as both): tensor FLOPs are 0, those HFMAs no FP16 FLOPs,
    and the kernel's FLOPs are its FP32 count, 2 x 34,359,738,368,000 (it once had none, the run
    `FLOP >= 68.7 T`)."""
    path = fixture_path("a100_gemm_printfp_details.csv")
    tensor_inst = dict(_details_cells(path, "smsp__inst_executed_pipe_tensor.sum"))
    simt = _simt_from_cells(path, 2)
    assert tensor_inst[2] > 0 and tensor_inst[2] * 32 == simt["hfma"]
    report = report_of(path)
    k = report.kernels.set_index("launch_id")
    assert k.loc[2, "flop_tensor"] == 0
    assert k.loc[2, "flop_fp16"] == simt["fp16"] - 4 * simt["hfma"]
    assert (
        k.loc[2, "flop"]
        == simt["fp64"] + simt["fp32"] + simt["fp16"] - 4 * simt["hfma"]
        == pytest.approx(68.72e12, rel=1e-3)
    )
    assert (
        "flop_tensor 0: every tensor-pipe instruction an HFMA2.MMA register move"
        in k.loc[2, "provenance"]
    )
    assert "flop_fp16 leaves out the HFMAs: HFMA2.MMA register moves" in k.loc[2, "provenance"]
    assert "flop_tensor" not in {m.column for m in report.missing}
    s = report.summary()
    expected = sum(
        sum(v for p, v in _simt_from_cells(path, n).items() if p in ("fp64", "fp32"))
        for n in (0, 1, 2)
    )
    assert s.total_flop == expected and s.unknown_flop_time_share == 0


def test_unknown_tensor_work_leaves_total_unknown_and_names_the_metric(tmp_path):
    """The same SGEMM with one HFMA fewer than 32 per tensor-pipe instruction (a partial warp, or
    one real MMA): the tensor pipe may have run MMAs, Ampere's FLOPs per instruction depend on the
    MMA shape, and no tensor op counter was collected: its FLOPs are unknown, not its SIMT FLOPs
    alone."""
    from ..helpers.raw_csv import partial_warp_sgemm

    source = fixture_path("a100_gemm_printfp_details.csv")
    hfma = dict(_details_cells(source, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"))[2]
    path = partial_warp_sgemm(source, tmp_path / source.name)
    report = read_report(path)
    tensor_inst = dict(_details_cells(path, "smsp__inst_executed_pipe_tensor.sum"))
    assert (
        tensor_inst[2] * 32
        == hfma
        != dict(_details_cells(path, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"))[2]
    )
    k = report.kernels.set_index("launch_id")
    assert (
        tensor_inst[2] == 104_857_600
        and math.isnan(k.loc[2, "flop_tensor"])
        and math.isnan(k.loc[2, "flop"])
    )
    assert tensor_inst[0] == 0 and k.loc[0, "flop_tensor"] == 0 and k.loc[0, "flop"] > 0
    missing = {m.column: m for m in report.missing}
    # The instruction counter was collected (smsp__): what settles it is a tensor op counter, not
    # that again.
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in missing["flop_tensor"].fix()
    assert "inst_executed_pipe_tensor" not in missing["flop_tensor"].fix()
    assert (
        missing["flop_tensor"].problem()
        == "flop_tensor unknown for 1 launch(es) (tensor instructions were counted, but flopscope"
        " has no checked FLOPs per instruction for CC 8.0)"
    )
    assert "no checked FLOP/instruction for CC 8.0" in k.loc[2, "provenance"]


def test_fp64_kernel_judged_against_its_precisions_peaks():
    """miniweather's tendencies kernel: 21.4 GFLOP FP64 and 1.4 GFLOP FP32 on a V100 (report peak
    counters x clock). Its ceiling is the FLOP-weighted harmonic mean of the two peaks, F / (F64/P64
    + F32/P32): % of peak is the time its FLOPs need at peak over the time they took. FP32 takes 3%
    of that time: named fp64."""
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    report = report_of(path)
    row = report.kernels.set_index("kernel").loc["compute_tendencies_x_279_gpu"]
    action = next(a for a in report_actions(path) if a.name() == "compute_tendencies_x_279_gpu")
    clock = counter(action, "sm__cycles_elapsed.avg.per_second")
    p64 = counter(action, "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2") * clock
    p32 = counter(action, "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2") * clock
    f64, f32 = rate_flops(action, "d"), rate_flops(action, "f")
    assert f64 > 10 * f32 > 0
    at_peak = f64 / p64 + f32 / p32
    peak = (f64 + f32) / at_peak
    assert row["precision"] == "fp64"
    assert row["peak_flop_per_s"] == pytest.approx(peak, rel=1e-9)
    seconds = counter(action, "gpu__time_duration.sum") * 1e-9
    assert row["pct_of_peak"] == pytest.approx(100 * at_peak / seconds, rel=1e-9)
    dram = counter(action, "dram__bytes_read.sum") + counter(action, "dram__bytes_write.sum")
    assert row["dram_bytes"] == pytest.approx(dram)
    assert row["ai_dram"] == pytest.approx(row["flop"] / dram)
    ridge = row["peak_flop_per_s"] / row["peak_dram_bytes_per_s"]
    assert row["bound"] == ("compute" if row["ai_dram"] >= ridge else "memory")
    assert row["attainable_flop_per_s"] == pytest.approx(
        min(peak, row["ai_dram"] * row["peak_dram_bytes_per_s"])
    )


def test_a_mixed_precision_kernel_is_judged_against_both_peaks():
    """H100 fill_vector does 1.08 GFLOP FP32 and 0.92 GFLOP FP64: judged against FP32 alone it
    looked twice as far from peak for its FP64 part. FP64 runs at half the FP32 rate, so it takes
    63% of the time at peak: named 'fp64+fp32'. Its name group (one launch) shows the same
    numbers."""
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    report = report_of(path)
    i, action = next(
        (i, a) for i, a in enumerate(report_actions(path)) if a.name() == "fill_vector"
    )
    row = report.kernels.iloc[i]
    clock = counter(action, "smsp__cycles_elapsed.avg.per_second")
    seconds = counter(action, "gpu__time_duration.sum") * 1e-9
    flops = {letter: rate_flops(action, letter) for letter in "df"}
    peaks = {
        letter: (
            counter(action, f"derived__sm__sass_thread_inst_executed_op_{letter}fma_pred_on_x2")
            * clock
        )
        for letter in "df"
    }
    at_peak = flops["d"] / peaks["d"] + flops["f"] / peaks["f"]
    assert flops["f"] == pytest.approx(1.077e9, rel=1e-3) and flops["d"] == pytest.approx(
        0.919e9, rel=1e-3
    )
    group = report.group("name").set_index("kernel").loc["fill_vector"]
    for judged in (row, group):
        assert judged["precision"] == "fp64+fp32"
        assert judged["peak_flop_per_s"] == pytest.approx(
            (flops["d"] + flops["f"]) / at_peak, rel=1e-9
        )
        assert judged["pct_of_peak"] == pytest.approx(100 * at_peak / seconds, rel=1e-9)
        assert judged["peak_source"] == "report"
    assert report.summary().flops_efficiency == pytest.approx(
        report.kernels["flop"].sum()
        / (report.kernels["duration_s"] * report.kernels["peak_flop_per_s"]).sum()
    )


def test_run_level_figures():
    report = report_of(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"))
    k, s = report.kernels, report.summary()
    assert s.total_time_s == pytest.approx(k["duration_s"].sum())
    assert s.total_flop == pytest.approx(k["flop"].sum())
    assert s.flops_efficiency == pytest.approx(
        k["flop"].sum() / (k["duration_s"] * k["peak_flop_per_s"]).sum()
    )
    assert s.compute_efficiency == pytest.approx(
        k.loc[k["flop"] > 0, "duration_s"].sum() / k["duration_s"].sum()
    )
    assert s.bandwidth_efficiency == pytest.approx(
        k["dram_bytes"].sum() / (k["duration_s"] * k["peak_dram_bytes_per_s"]).sum()
    )


def test_grouping_sums_match_launches():
    report = report_of(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    by_name = report.group("name")
    assert by_name["count"].sum() == 154
    assert by_name["duration_s"].sum() == pytest.approx(report.kernels["duration_s"].sum())
    assert by_name["pct_time"].sum() == pytest.approx(100.0)
    assert list(by_name["duration_s"]) == sorted(by_name["duration_s"], reverse=True)
    assert len(report.group("launch")) == 154
    assert report.group("nvtx")["count"].sum() == 154


def test_a_report_leaves_the_callers_frame_as_it_was():
    """A Report of some launches (a filter, a concatenation) has its own shares of time; the frame
    it was built from keeps its columns and values (it once got the new count and pct_time written
    into it)."""
    whole = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    for frame in (whole.kernels.iloc[:40], whole.kernels.drop(columns=["count", "pct_time"])):
        before, attrs = frame.copy(), dict(frame.attrs)
        part = Report(meta=whole.meta, kernels=frame, gpu=whole.gpu)
        part.group("name"), part.group("launch", time_order=False)
        pd.testing.assert_frame_equal(frame, before)
        assert frame.attrs == attrs
        duration = before["duration_s"].to_numpy()
        assert part.kernels["pct_time"].to_numpy() == pytest.approx(100 * duration / duration.sum())
        assert (part.kernels["count"] == 1).all()


def _raw_page(tmp_path, cols: dict[str, tuple[str, float]]):
    """One H100 launch as `ncu --csv --page raw --print-units base` prints it."""
    return read_report(one_launch(tmp_path / "raw.csv", cols)).kernels.iloc[0]


def test_half_counters_count_two_lane_instructions(tmp_path):
    """hfma/hadd/hmul count HFMA2/HADD2/HMUL2 thread instructions: 2 x 2 FLOPs per HFMA2, 2 per
    HADD2/HMUL2. The peak check is independent: H100 SXM issues 128 HFMA2 per SM per cycle (ncu's
    peak_sustained, the same issue rate as FFMA), and 132 SMs at 1.98 GHz must then give the
    whitepaper's 133.8 TFLOP/s FP16 (and FFMA the 66.9 TFLOP/s FP32)."""
    hfma, hadd, hmul = 2**24 * 16, 1000, 10
    row = _raw_page(
        tmp_path,
        {
            "gpu__time_duration.sum": ("nsecond", 1e6),
            "smsp__cycles_elapsed.avg.per_second": ("cycle/second", 1.98e9),
            "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": ("inst", hfma),
            "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum": ("inst", hadd),
            "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum": ("inst", hmul),
            "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained": (
                "inst/cycle",
                128 * 132,
            ),
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": (
                "inst/cycle",
                128 * 132,
            ),
        },
    )
    assert row["flop_fp16"] == 4 * hfma + 2 * hadd + 2 * hmul
    h100 = next(g for g in all_gpus() if g.key == "h100-sxm")
    assert row["report_peak_fp16_flop_per_s"] == pytest.approx(h100.peak("fp16"), rel=1e-3)
    assert row["report_peak_fp32_flop_per_s"] == pytest.approx(h100.peak("fp32"), rel=1e-3)


def test_a_blank_duration_unit_is_ncus_nanoseconds(tmp_path):
    """ncu 2024.1 re-printing an RTX 5060 Ti report (a GPU it does not know) leaves every unit cell
    blank; the duration is still in ncu's base unit, nanoseconds (20064 ns for that report's first
    launch)."""
    row = _raw_page(
        tmp_path, {"gpu__time_duration.sum": ("", 20064), "dram__bytes.sum": ("", 1000)}
    )
    assert row["duration_s"] == pytest.approx(20064e-9, rel=1e-12)
    assert row["dram_bytes"] == 1000


def _per_opcode(action, metric: str) -> dict[str, int]:
    values = action.metric_by_name(metric)
    ids = values.correlation_ids()
    return {ids.as_string(j): values.as_uint64(j) for j in range(values.num_instances())}


def test_register_moves_are_not_fp16_flops():
    """H800 FP32 random-number kernels: their only half instructions, per ncu's per-modifier counts
    (read here straight from the report), are HFMA2.MMA, the compiler's constant moves (2,973,696 in
    launches 2 and 3, once counted as 11,894,784 FP16 FLOPs each). They are left out: FP16 FLOPs 0,
    the kernels' FLOPs their FP32 and FP64 ones, and the run's total the sum of those."""
    path = fixture_path("h800_sglang_flashattn_full.ncu-rep")
    report = report_of(path)
    kernels = report.kernels
    expected_run = 0.0
    for i, action in enumerate(report_actions(path)[:4]):
        half = {
            op: n
            for op, n in _per_opcode(
                action, "sass__thread_inst_executed_true_per_opcode_with_modifier_all"
            ).items()
            if op.startswith("H")
        }
        assert list(half) == ["HFMA2.MMA"]
        assert (
            _per_opcode(action, "sass__thread_inst_executed_true_per_opcode")["HFMA2"]
            == half["HFMA2.MMA"]
        )
        row = kernels.iloc[i]
        assert row["flop_fp16"] == 0
        fp32, fp64 = rate_flops(action, "f"), rate_flops(action, "d")
        assert row["flop"] == pytest.approx(fp32 + fp64, rel=1e-9)
        assert (
            "flop_fp16 leaves out HFMA2.MMA register moves (per-modifier SASS counts)"
            in row["provenance"]
        )
        expected_run += fp32 + fp64
    assert kernels.iloc[2]["launch_id"] == 2 and half["HFMA2.MMA"] == 2_973_696
    assert report.summary().flop_counted == pytest.approx(expected_run, rel=1e-9)


def test_register_moves_beside_fp16_math_are_left_out_and_kept_on_turing(tmp_path):
    """A launch whose tensor pipe ran only HFMA2.MMA (x 32 = its HFMAs) beside real HADD2s: the
    HADD2s are FP16 FLOPs, the moves are not. On Turing, which may run FP16 math as HFMA2.MMA, they
    stay counted and flagged."""
    hfma, hadd, warps = 32 * 1000, 77, 1000
    cols = {
        "gpu__time_duration.sum": ("nsecond", 1e5),
        "smsp__inst_executed_pipe_tensor.sum": ("inst", warps),
        **{m: ("inst", 0) for m in SIMT},
        "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": ("inst", hfma),
        "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum": ("inst", hadd),
    }
    ampere = read_report(one_launch(tmp_path / "a.csv", cols, cc="8.0")).kernels.iloc[0]
    assert (
        ampere["flop_fp16"] == 2 * hadd
        and ampere["flop_tensor"] == 0
        and ampere["flop"] == 2 * hadd
    )
    (tmp_path / "t").mkdir()
    turing = read_report(one_launch(tmp_path / "t" / "t.csv", cols, cc="7.5")).kernels.iloc[0]
    assert turing["flop_fp16"] == 4 * hfma + 2 * hadd and turing["flop_tensor"] == 0
    assert "kept: Turing" in turing["provenance"]


def test_a_launch_with_unknown_flops_leaves_its_group_and_run_unknown_not_undercounted(tmp_path):
    """Six launches of one V100 tensor-core GEMM; ncu printed n/a for the first one's tensor
    instructions. A sum over the other five would pass for the kernel's FLOPs (5/6 of them, over the
    time of all 6): the group and the run say unknown, and the run keeps the counted part and the
    time it covers apart."""
    from ..helpers.raw_csv import launches, raw_csv, simt_flop

    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    path = tmp_path / "gemm.csv"
    path.write_text(raw_csv([gemm] * 6, na_metric="sm__inst_executed_pipe_tensor.sum"))
    report = read_report(path)
    one = 2 * 20480**3  # the app's own printout: a 20480^3 GEMM, its MMAs on tensor cores
    assert gemm["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] == 0
    simt = simt_flop(gemm)  # the epilogue's adds and multiplies, counted in every launch
    assert 0 < simt < 1e-3 * one
    group = report.group("name").iloc[0]
    assert group["count"] == 6 and math.isnan(group["flop"]) and math.isnan(group["flop_per_s"])
    assert group["duration_s"] == pytest.approx(6 * report.kernels["duration_s"].iloc[1])
    s = report.summary()
    assert math.isnan(s.total_flop) and math.isnan(s.flops_efficiency) and math.isnan(s.flop_per_s)
    # the counted part: five whole launches and the first one's SIMT FLOPs
    assert s.flop_counted == pytest.approx(5 * (one + simt) + simt, rel=1e-9)
    assert s.unknown_flop_time_share == pytest.approx(1 / 6)
    # The first launch did floating-point work (its SIMT FLOPs are counted): every launch counts as
    # working.
    assert s.compute_efficiency == 1.0
    from flopscope.tui.presentation.text_report import header_lines

    expected = fmt_si(5 * (one + simt) + simt)
    assert f"FLOP ≥ {expected} (unknown for 16.7% of kernel time)" in "\n".join(
        header_lines(report)
    )


def test_only_unfamiliar_metrics_mean_counters_missing_not_launches_failed():
    """A details CSV of throughput percentages only (robocache on an H100): every launch was
    profiled; the counters flopscope needs were not collected. Time stays unknown, not 0 s, and the
    fix is named."""
    report = report_of(fixture_path("h100pcie_robocache_cmdline_details.csv"))
    s = report.summary()
    assert s.not_profiled == 0 and math.isnan(s.total_time_s)
    assert {m.column for m in report.missing} >= {"duration_s", "flop_fp32", "dram_bytes"}
    assert (
        next(m for m in report.missing if m.column == "duration_s").launches
        == len(report.kernels)
        == 9
    )
    assert (
        "gpu__time_duration.sum"
        in next(m for m in report.missing if m.column == "duration_s").fix()
    )


def fmt_si(value: float) -> str:
    from flopscope.tui.presentation import format as fmt

    return fmt.si(value)


def fmt_seconds(value: float) -> str:
    from flopscope.tui.presentation import format as fmt

    return fmt.seconds(value)


def test_an_int8_tensor_gemm_has_zero_tensor_flops_and_says_why():
    """CUTLASS INT8 GEMMs on an A100 (full set): the tensor pipe is busy with IMMA only, which is
    integer work. Tensor FLOPs are 0 (not unknown), the FLOPs are the SIMT ones, and the row says
    IMMA was left out, without calling the tensor pipes idle (the IMMA pipe is 26.9% active in
    launch 0). No FLOP ceiling judges integer work: % of peak, % of roof and bound are empty (they
    were 0.0% and `memory`), and the run's FLOPS efficiency has no launch to judge. Compute
    efficiency counts them as working: all three do IMMA."""
    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    report = report_of(path)
    for action, (_, row) in zip(report_actions(path), report.kernels.iterrows(), strict=True):
        assert (
            counter(
                action, "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active"
            )
            > 20
        )
        assert (
            counter(
                action, "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active"
            )
            == 0
        )
        fp32 = rate_flops(action, "f")
        assert row["flop_tensor"] == 0
        assert row["flop"] == pytest.approx(
            fp32 + row["flop_fp64"] + row["flop_fp16"], rel=1e-9, abs=1e-6
        )
        assert row["flop_fp64"] == 0 and row["flop_fp16"] == 0
        assert "integer tensor-core work (IMMA) is not FLOPs" in row["provenance"]
        assert (
            "flop_tensor 0: floating-point tensor pipes idle (the integer one ran IMMA)"
            in row["provenance"]
        )
        assert "tensor pipes idle;" not in row["provenance"] + ";"
        assert "no % of peak or bound: its work is integer MMA" in row["provenance"]
        assert row["integer_mma"] and row["bound"] == "" and row["precision"] == ""
        assert (
            math.isnan(row["pct_of_peak"])
            and math.isnan(row["pct_of_roof"])
            and math.isnan(row["peak_flop_per_s"])
        )
    group = report.group("name")
    assert group["bound"].eq("").all() and group["pct_of_peak"].isna().all()
    s = report.summary()
    assert s.total_flop > 0 and math.isnan(s.flops_efficiency) and s.compute_efficiency == 1.0


def test_dram_ceiling_uses_the_reports_steady_memory_clock_not_a_short_kernels_reading():
    """miniweather on a V100: HBM2 runs at 877 MHz, but ncu reads 416-532 MHz for the 11-13 us halo
    kernels. Every launch's DRAM ceiling is bytes/cycle x the device's clock over the whole report
    (cycles / time)."""
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    actions = report_actions(path)
    hz = [counter(a, "dram__cycles_elapsed.avg.per_second") for a in actions]
    ns = [counter(a, "gpu__time_duration.sum") for a in actions]
    steady = sum(h * t for h, t in zip(hz, ns, strict=True)) / sum(ns)
    assert min(hz) < 0.7 * steady  # the noisy reading this guards against
    report = report_of(path)
    for action, (_, row) in zip(actions, report.kernels.iterrows(), strict=True):
        assert row["peak_dram_bytes_per_s"] == pytest.approx(
            counter(action, "dram__bytes.sum.peak_sustained") * steady, rel=1e-9
        )
    # 4096 bit x 2 x 877 MHz
    assert report.kernels["peak_dram_bytes_per_s"].iloc[0] == pytest.approx(898e9, rel=0.01)


def test_a_launch_ncu_failed_is_not_profiled_even_alone():
    """H800 report: ncu recorded nothing for flash_fwd_kernel (launch 4). Read on its own, as `ncu
    -k flash_fwd -c 1` would give it, it is still a launch ncu failed to profile, not one whose
    counters were not asked for."""
    from flopscope.core.readers import read_metrics
    from flopscope.core.table.counters import count_kernels

    frame, _ = read_metrics(fixture_path("h800_sglang_flashattn_full.ncu-rep"))
    alone = count_kernels(frame.iloc[[4]].reset_index(drop=True))
    assert alone.kernels["status"].iloc[0].startswith("not profiled") and not alone.missing


def test_a_precision_without_its_counters_is_unknown_not_zero(tmp_path):
    """A100 file with the FP32 counters only: an FP64 kernel's FLOPs are unknown (not 0 FLOPs at 0%
    of peak), the FP32 kernel's total too (its FP64 part was not counted), and the run prints the
    FP32 count as a lower bound, names the FP64/FP16 counters and cannot say which share of time did
    floating-point work."""
    from flopscope.tui.presentation.text_report import header_lines

    from ..helpers.raw_csv import page

    units = {"gpu__time_duration.sum": "nsecond", "dram__bytes.sum": "byte", **SIMT}
    rows = [
        {
            "kernel": "cache_resident",
            "gpu__time_duration.sum": 1e5,
            "dram__bytes.sum": 1e6,
            **fp32_only(1e9),
        },
        {
            "kernel": "dgemm_like",
            "gpu__time_duration.sum": 1e5,
            "dram__bytes.sum": 1e6,
            **fp32_only(0),
        },
    ]
    report = read_report(page(tmp_path / "fp32.csv", units, rows, gpu="NVIDIA A100-PCIE-40GB"))
    k = report.kernels.set_index("kernel")
    assert k.loc["cache_resident", "flop_fp32"] == 2e9 and k.loc["dgemm_like", "flop_fp32"] == 0
    assert k[["flop_fp64", "flop_fp16", "flop", "flop_per_s", "pct_of_peak"]].isna().all().all()
    s = report.summary()
    assert (
        math.isnan(s.total_flop)
        and math.isnan(s.compute_efficiency)
        and math.isnan(s.flops_efficiency)
    )
    assert s.flop_counted == 2e9 and s.unknown_flop_time_share == 1.0
    header = "\n".join(header_lines(report))
    assert (
        "FLOP ≥ 2.00 G (unknown for 100.0% of kernel time)" in header
        and "arith. time n/a" in header
    )
    fix = {m.column: m.fix() for m in report.missing}
    assert fix["flop_fp64"] == "ncu --metrics " + ",".join(
        f"smsp__sass_thread_inst_executed_op_d{op}_pred_on.sum" for op in ("add", "mul", "fma")
    )
    assert "flop_fp32" not in fix


def test_fma_alone_is_not_the_fp32_count_and_the_fix_names_add_and_mul(tmp_path):
    from ..helpers.raw_csv import page

    fma_only = {f"smsp__sass_thread_inst_executed_op_{p}fma_pred_on.sum": "inst" for p in "fdh"}
    row = {
        "gpu__time_duration.sum": 1e5,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1000,
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": 0,
        "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": 0,
    }
    report = read_report(
        page(tmp_path / "fma.csv", {"gpu__time_duration.sum": "nsecond", **fma_only}, [row])
    )
    assert report.kernels[["flop_fp32", "flop_fp64", "flop_fp16", "flop"]].isna().all().all()
    fix = {m.column: m.fix() for m in report.missing}
    assert (
        fix["flop_fp32"] == "ncu --metrics smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
    )


def test_counters_present_and_zero_are_zero_flops(tmp_path):
    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "sm__inst_executed_pipe_tensor.sum": "inst",
        **SIMT,
    }
    row = {
        "gpu__time_duration.sum": 1e5,
        "sm__inst_executed_pipe_tensor.sum": 0,
        **dict.fromkeys(SIMT, 0),
        **fp32_only(7, fadd=3),
    }
    report = read_report(page(tmp_path / "zero.csv", units, [row]))
    row = report.kernels.iloc[0]
    assert (
        row["flop_fp64"] == 0
        and row["flop_fp16"] == 0
        and row["flop_fp32"] == 17
        and row["flop"] == 17
    )
    assert not [m for m in report.missing if m.column.startswith("flop")]


def test_counted_tensor_work_with_some_simt_counters_missing_counts_what_was_counted(tmp_path):
    """An H100 GEMM with tensor and FP32 counters only: the total is tensor + FP32 (its epilogue is
    noise next to the MMAs), and the row names the precisions left out."""
    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": "",
        **{m: u for m, u in SIMT.items() if "_op_f" in m},
    }
    row = {
        "gpu__time_duration.sum": 1e6,
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 7e11,
        **fp32_only(5, 1, 1),
    }
    k = read_report(page(tmp_path / "gemm.csv", units, [row], cc="9.0")).kernels.iloc[0]
    assert k["flop"] == 7e11 + 12 and math.isnan(k["flop_fp64"])
    assert "flop leaves out flop_fp64 (counters not collected)" in k["provenance"]
    assert "flop leaves out flop_fp16 (counters not collected)" in k["provenance"]


def test_flops_without_dram_traffic_are_compute_bound_at_the_compute_roof(tmp_path):
    """A cache-resident FP32 kernel on an A100 (2 GFLOP in 100 us, 0 DRAM bytes): infinitely
    intense, so compute bound, its roof the FP32 peak and its % of roof its % of peak (not memory
    bound with blanks). The JSON says null for the infinite AI (JSON has no infinity) and stays
    strict JSON."""
    import json
    import subprocess

    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "dram__bytes.sum": "byte",
        "lts__t_bytes.sum": "byte",
        "sm__inst_executed_pipe_tensor.sum": "inst",
        **SIMT,
    }
    row = {
        "kernel": "cache_resident",
        "gpu__time_duration.sum": 1e5,
        "dram__bytes.sum": 0,
        "lts__t_bytes.sum": 4e6,
        "sm__inst_executed_pipe_tensor.sum": 0,
        **dict.fromkeys(SIMT, 0),
        **fp32_only(1e9),
    }
    path = page(tmp_path / "cache.csv", units, [row], gpu="NVIDIA A100-PCIE-40GB")
    report = read_report(path)
    for k in (report.kernels.iloc[0], report.group("name").iloc[0]):
        assert k["flop"] == 2e9 and math.isinf(k["ai_dram"]) and k["ai_l2"] == 2e9 / 4e6
        assert k["bound"] == "compute"
        # A100: 108 SMs x 64 FP32 lanes x FMA at the 1410 MHz boost clock
        fp32 = 108 * 64 * 2 * 1.41e9
        assert k["attainable_flop_per_s"] == k["peak_flop_per_s"] == pytest.approx(fp32, rel=1e-3)
        assert (
            k["pct_of_roof"] == k["pct_of_peak"] == pytest.approx(100 * 2e9 / 1e-4 / fp32, rel=1e-3)
        )
    out = subprocess.run(
        [*CLI, "report", str(path), "--json"], capture_output=True, text=True, check=True
    ).stdout
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert doc["rows"][0]["ai_dram"] is None and doc["rows"][0]["bound"] == "compute"
    table = subprocess.run(
        [*CLI, "report", str(path)], capture_output=True, text=True, check=True
    ).stdout
    cells = next(line for line in table.splitlines() if line.startswith("cache_resident")).split()
    assert (
        cells[cells.index("∞") :][:2] == ["∞", f"{100 * 2e9 / 1e-4 / 19.5e12:.1f}%"]
        and "compute" in cells
    )


def test_a_group_is_judged_like_the_run_against_its_launches_peaks(tmp_path):
    """Two launches of one kernel name on an A100: 2 GFLOP FP32 in 100 us, then 2 GFLOP FP64 in 300
    us. Peaks from the report's counters: 108 SMs x 64 FFMA (32 DFMA) per cycle x 2 x 1.41 GHz. The
    group's peak is the duration-weighted mean of its launches' peaks, so its % of peak is its FLOPs
    over sum(duration x peak) (not the harmonic mean of the group's summed FLOPs, 2/3 of the FP32
    peak whatever the durations)."""
    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__cycles_elapsed.avg.per_second": "cycle/second",
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": "inst/cycle",
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": "inst/cycle",
        "sm__inst_executed_pipe_tensor.sum": "inst",
        **SIMT,
    }
    common = {
        "kernel": "k",
        "smsp__cycles_elapsed.avg.per_second": 1.41e9,
        "sm__inst_executed_pipe_tensor.sum": 0,
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 108 * 64,
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": 108 * 32,
        **dict.fromkeys(SIMT, 0),
    }
    rows = [
        {
            **common,
            "gpu__time_duration.sum": 1e5,
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1e9,
        },
        {
            **common,
            "gpu__time_duration.sum": 3e5,
            "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": 1e9,
        },
    ]
    report = read_report(page(tmp_path / "two.csv", units, rows))
    p32, p64 = 108 * 64 * 2 * 1.41e9, 108 * 32 * 2 * 1.41e9
    assert list(report.kernels["peak_flop_per_s"]) == pytest.approx([p32, p64], rel=1e-12)
    group = report.group("name").iloc[0]
    assert group["peak_flop_per_s"] == pytest.approx((1 * p32 + 3 * p64) / 4, rel=1e-12)
    assert group["pct_of_peak"] == pytest.approx(100 * 4e9 / (1e-4 * p32 + 3e-4 * p64), rel=1e-12)
    assert group["pct_of_peak"] == pytest.approx(100 * report.summary().flops_efficiency, rel=1e-12)
    assert group["precision"] == "fp64+fp32"  # FP64 takes 2/3 of the group's time at peak


@pytest.mark.parametrize(
    ("gpu", "sms", "clock"),
    [
        ("NVIDIA H100 PCIe", 114, 1.755e9),
        ("NVIDIA H100 80GB HBM3", 132, 1.98e9),
        ("NVIDIA H100 80GB HBM3", 132, 1.5e9),
    ],
)
def test_hopper_tensor_ceilings_follow_the_tensor_cores_rate_at_the_measured_clock(
    tmp_path, gpu, sms, clock
):
    """Hopper's dense FP16 tensor rate is 4096 FLOP per clock per SM (1024 FMA per tensor core, 4
    per SM); NVIDIA quotes its tensor peaks at a clock below the SIMT boost clock, so scaling the
    datasheet value by measured / boost clock came out 7.6% low. FP64 tensor work (256 FLOP/clk/SM)
    is quoted at the boost clock."""
    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__cycles_elapsed.avg.per_second": "cycle/second",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": "",
        "sm__ops_path_tensor_src_fp64.sum": "",
        **SIMT,
    }
    base = {
        "gpu__time_duration.sum": 1e6,
        "smsp__cycles_elapsed.avg.per_second": clock,
        **dict.fromkeys(SIMT, 0),
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 0,
        "sm__ops_path_tensor_src_fp64.sum": 0,
    }
    rows = [
        {**base, "kernel": "hgemm", "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 7e11},
        {**base, "kernel": "dgemm", "sm__ops_path_tensor_src_fp64.sum": 3e10},
    ]
    k = read_report(page(tmp_path / "h100.csv", units, rows, gpu=gpu, cc="9.0")).kernels.set_index(
        "kernel"
    )
    assert (
        k.loc["hgemm", "precision"] == "tensor_fp16"
        and k.loc["dgemm", "precision"] == "tensor_fp64"
    )
    assert k.loc["hgemm", "peak_flop_per_s"] == pytest.approx(sms * 4096 * clock, rel=1e-3)
    assert k.loc["dgemm", "peak_flop_per_s"] == pytest.approx(sms * 256 * clock, rel=2e-3)


def test_each_launch_is_judged_against_its_own_gpu(tmp_path, monkeypatch):
    """One file, one kernel, launches on an A100 (1.41 GHz) and on an H100 PCIe (1.755 GHz): each
    launch gets its own GPU's ceilings (A100 FP32: 108 SMs x 128 FLOP/clk, H100: 114 x 256),
    grouping by name keeps the GPUs apart, the header names both, and a stored run comes back the
    same."""
    from flopscope.core.store.run_store import Store
    from flopscope.tui.presentation.text_report import header_lines

    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__cycles_elapsed.avg.per_second": "cycle/second",
        "dram__bytes.sum": "byte",
        "sm__inst_executed_pipe_tensor.sum": "inst",
        **SIMT,
    }
    base = {
        "kernel": "k",
        "gpu__time_duration.sum": 1e6,
        "dram__bytes.sum": 1e8,
        "sm__inst_executed_pipe_tensor.sum": 0,
        **dict.fromkeys(SIMT, 0),
        **fp32_only(1e9),
    }
    a100 = {
        **base,
        "gpu": "NVIDIA A100-PCIE-40GB",
        "cc": "8.0",
        "smsp__cycles_elapsed.avg.per_second": 1.41e9,
    }
    h100 = {
        **base,
        "gpu": "NVIDIA H100 PCIe",
        "cc": "9.0",
        "smsp__cycles_elapsed.avg.per_second": 1.755e9,
    }
    report = read_report(page(tmp_path / "two_gpus.csv", units, [a100, h100, h100]))
    peaks = {"NVIDIA A100-PCIE-40GB": 108 * 128 * 1.41e9, "NVIDIA H100 PCIe": 114 * 256 * 1.755e9}
    k = report.kernels
    assert list(k["peak_flop_per_s"]) == pytest.approx([peaks[g] for g in k["gpu"]], rel=1e-3)
    # A100 HBM2
    assert k["peak_dram_bytes_per_s"].iloc[0] == pytest.approx(5120 / 8 * 2 * 1.215e9, rel=1e-3)
    assert k["peak_dram_bytes_per_s"].iloc[1] != k["peak_dram_bytes_per_s"].iloc[0]
    groups = report.group("name").set_index("gpu")
    assert list(groups["count"]) == [2, 1] and set(groups["kernel"]) == {"k"}
    for gpu, peak in peaks.items():
        n = groups.loc[gpu, "count"]
        assert groups.loc[gpu, "peak_flop_per_s"] == pytest.approx(peak, rel=1e-3)
        assert groups.loc[gpu, "pct_of_peak"] == pytest.approx(
            100 * n * 2e9 / (n * 1e-3 * peak), rel=1e-3
        )
    header = "\n".join(header_lines(report))
    assert header.startswith(
        "NVIDIA H100 PCIe (CC 9.0, 2 launches) + NVIDIA A100-PCIE-40GB (CC 8.0, 1 launch)"
    )
    assert re.search(r"Ceilings, NVIDIA H100 PCIe( at SM \S+ [GM]Hz)?: FP32 51\.", header), header
    assert re.search(r"Ceilings, NVIDIA A100-PCIE-40GB( at SM \S+ [GM]Hz)?: FP32 19\.", header), (
        header
    )
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    store = Store()
    store.save(report, "two")
    back = store.load("two")
    assert list(back.group("name")["peak_flop_per_s"]) == pytest.approx(
        list(groups["peak_flop_per_s"])
    )
    assert "\n".join(header_lines(back)) == header
    store.close()


def test_fp16_accumulate_tensor_work_is_judged_against_the_fp16_accumulate_peak(tmp_path):
    """An RTX 4090 (Ada GeForce: 128 SMs x 1024 dense FP16 FLOP/clk with FP16 accumulate, half that
    with FP32 accumulate) at 2.52 GHz: 300 TFLOP accumulating in FP16 and 100 TFLOP in FP32 in one
    second. Against the FP32-accumulate peak alone it read 242% of peak; each part now has its own
    ceiling. The all-destination total beside the pair is not added again, and does not hide how the
    work accumulated."""
    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__cycles_elapsed.avg.per_second": "cycle/second",
        "sm__ops_path_tensor_src_fp16.sum": "",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": "",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": "",
        **SIMT,
    }
    row = {
        "gpu__time_duration.sum": 1e9,
        "smsp__cycles_elapsed.avg.per_second": 2.52e9,
        **dict.fromkeys(SIMT, 0),
        "sm__ops_path_tensor_src_fp16.sum": 4e14,
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": 3e14,
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 1e14,
    }
    k = read_report(
        page(tmp_path / "hgemm.csv", units, [row], gpu="NVIDIA GeForce RTX 4090", cc="8.9")
    ).kernels
    k = k.iloc[0]
    assert (
        k["flop_tensor"] == 4e14
        and k["flop_tensor_fp16_acc16"] == 3e14
        and k["flop_tensor_fp16"] == 1e14
    )
    acc16 = 128 * 1024 * 2.52e9
    at_peak = 3e14 / acc16 + 1e14 / (acc16 / 2)
    assert k["pct_of_peak"] == pytest.approx(100 * at_peak / 1.0, rel=1e-3)
    assert k["peak_flop_per_s"] == pytest.approx(4e14 / at_peak, rel=1e-3)
    assert k["precision"] == "tensor_fp16_acc16+tensor_fp16"


def test_fp16_accumulate_peaks_default_to_the_fp32_accumulate_ones():
    """Data-center parts accumulate in FP16 and FP32 at one rate; GeForce lists FP16 accumulate at
    twice."""
    a100, rtx4090 = find_gpu_key("a100-sxm4-80gb"), find_gpu_key("rtx4090")
    assert a100.peak("tensor_fp16_acc16") == a100.peak("tensor_fp16")
    assert rtx4090.peak("tensor_fp16_acc16") == pytest.approx(
        2 * rtx4090.peak("tensor_fp16"), rel=1e-3
    )
    assert rtx4090.peak("tensor_fp8_acc16") == pytest.approx(
        2 * rtx4090.peak("tensor_fp8"), rel=1e-3
    )


def find_gpu_key(key: str):
    return next(g for g in all_gpus() if g.key == key)


def test_a_launch_with_rates_but_no_duration_was_profiled_and_lacks_only_its_duration():
    """A roofline-section CSV (RTX 5090 CUTLASS GEMM): ncu printed FLOP and DRAM rates, clocks and
    peaks, but no gpu__time_duration.sum. The launch was profiled (not 'ncu failed'); its duration
    is what is missing."""
    from flopscope.tui.presentation.text_report import header_lines

    report = read_report(
        fixture_path("rtx5090_dsocr_cutlass_gemm_roofline_section.csv"), gpu="rtx5090"
    )
    assert report.kernels["status"].iloc[0] == "ok" and report.summary().not_profiled == 0
    assert not any("ncu failed" in line for line in header_lines(report))
    missing = {m.column: m for m in report.missing}
    assert (
        missing["duration_s"].problem()
        == "duration_s not collected for 1 launch(es) (the FLOP and byte rates "
        "collected for them need it to become counts)"
    )
    assert missing["duration_s"].fix() == "ncu --metrics gpu__time_duration.sum"
    # FP32, FP64 and DRAM came as rates: the duration settles them; FP16 and tensor work were not
    # collected at all
    assert {"flop_fp32", "flop_fp64", "dram_bytes"}.isdisjoint(missing) and {
        "flop_fp16",
        "flop_tensor",
    } <= set(missing)


@pytest.mark.parametrize(
    "name",
    [
        "t4_mlp_matadd_full.ncu-rep",
        "v100_ncar_miniweather_fp64_full.ncu-rep",
        "h100pcie_ee384_cub_agents_full.ncu-rep",
        "a100pcie80_cutlass_gemm_full.ncu-rep",
    ],
)
def test_l2_bytes_of_a_full_set_report_are_its_sectors_times_32(name):
    """`--set full` collects lts__t_sectors.sum, not lts__t_bytes.sum (ncu defines the latter as
    sectors x 32 B): every full-set report said "l2_bytes not collected" and had no L2 column."""
    path = fixture_path(name)
    context = ncu_report.load_report(str(path))
    actions = [
        context.range_by_idx(r).action_by_idx(a)
        for r in range(context.num_ranges())
        for a in range(context.range_by_idx(r).num_actions())
    ]
    sectors = [a.metric_by_name("lts__t_sectors.sum") for a in actions]
    expected = [32 * m.as_double() if m is not None else math.nan for m in sectors]
    assert any(not math.isnan(v) for v in expected)
    report = report_of(path)
    got = report.kernels.sort_values("launch_id")["l2_bytes"].tolist()
    assert got == pytest.approx(expected, nan_ok=True)
    assert "l2_bytes" not in {m.column for m in report.missing}


def test_a_run_with_an_unprofiled_launch_reads_as_a_lower_bound():
    """H800: ncu recorded nothing for flash_fwd_kernel, so the run's time and FLOPs are unknown. The
    header read `Kernel time 87.1 us · FLOP 586 M` as if complete; now both are lower bounds, the
    FLOPs say what they leave out, and the efficiencies say they are of the launches of known time.
    JSON agrees: the totals are null, their counted parts given."""
    from flopscope.tui.presentation.text_report import header_lines

    path = fixture_path("h800_sglang_flashattn_full.ncu-rep")
    actions = report_actions(path)
    seconds = [counter(a, "gpu__time_duration.sum") for a in actions]
    assert math.isnan(seconds[4]) and not any(math.isnan(t) for t in seconds[:4])
    known = sum(seconds[:4]) * 1e-9
    flop = sum(rate_flops(a, "f") + rate_flops(a, "d") for a in actions[:4])
    report = report_of(path)
    s = report.summary()
    assert math.isnan(s.total_time_s) and math.isnan(s.total_flop) and math.isnan(s.flop_per_s)
    assert s.time_counted_s == pytest.approx(known, rel=1e-12) and s.flop_counted == pytest.approx(
        flop, rel=1e-9
    )
    assert s.unknown_time_launches == s.unknown_flop_untimed_launches == s.not_profiled == 1
    assert s.unknown_flop_time_share == 0
    header = " ".join("\n".join(header_lines(report)).split())
    assert (
        f"Kernel time ≥ {fmt_seconds(known)} · FLOP ≥ {fmt_si(flop)} (unknown for 1 launch of"
        " unknown time)" in header
    )
    assert "(shares of the 4 launches of known time)" in header
    doc = json.loads(run_cli("report", path, "--json").stdout)["meta"]["summary"]
    assert doc["total_time_s"] is None and doc["total_flop"] is None
    assert doc["time_counted_s"] == pytest.approx(known) and doc["unknown_time_launches"] == 1


def test_flops_unknown_only_for_a_launch_of_unknown_time_never_read_0_percent(tmp_path):
    """A launch that lacks its time and FLOPs (the cycles and FLOP counters of its V100 GEMM printed
    n/a) is in no share of kernel time: the header said `FLOP ≥ ... (unknown for 0.0% of kernel
    time)`."""
    from flopscope.tui.presentation.text_report import header_lines

    from ..helpers.raw_csv import launches, raw_csv

    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    table = list(csv.reader(raw_csv([gemm, gemm]).splitlines()))
    for metric in (
        "sm__cycles_elapsed.avg",
        "sm__cycles_elapsed.avg.per_second",
        "sm__inst_executed_pipe_tensor.sum",
    ):
        table[-1][table[0].index(metric)] = "n/a"
    path = tmp_path / "gemm.csv"
    path.write_text("".join(",".join(f'"{c}"' for c in row) + "\n" for row in table))
    report = read_report(path)
    s = report.summary()
    assert (
        s.unknown_flop_time_share == 0
        and s.unknown_flop_untimed_launches == 1
        and s.not_profiled == 0
    )
    header = " ".join("\n".join(header_lines(report)).split())
    assert "0.0% of kernel time" not in header
    assert "(unknown for 1 launch of unknown time)" in header
    assert "Kernel time ≥ " in header


def test_ceilings_name_the_sm_clock_they_are_taken_at():
    """A T4 under ncu's clock lock runs at 554 MHz, so its FP32 ceiling is 2.84 TFLOP/s, not the
    datasheet's 8.1: right, but it read as a bug without the clock. The header and the JSON ceilings
    now give it, read here from the report's own counter; FP32 = 40 SMs x 64 lanes x 2 (FMA) per
    clock."""
    import json
    import subprocess

    from ..helpers.cli import CLI

    path = fixture_path("t4_mlp_matadd_full.ncu-rep")
    clock = counter(report_actions(path)[0], "smsp__cycles_elapsed.avg.per_second")
    doc = json.loads(
        subprocess.run(
            [*CLI, "report", str(path), "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    fp32 = next(c for c in doc["meta"]["ceilings"] if c["name"] == "fp32")
    assert fp32["sm_clock_hz"] == pytest.approx(clock, rel=1e-6)
    assert fp32["value"] == pytest.approx(40 * 64 * 2 * clock, rel=1e-3)
    table = subprocess.run(
        [*CLI, "report", str(path)],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "PATH": ""},
    ).stdout
    ceilings = next(line for line in table.splitlines() if line.startswith("Ceilings"))
    assert (
        ceilings.startswith(f"Ceilings at SM {clock / 1e6:.0f} MHz: ") and "(SM" not in ceilings
    ), ceilings
    assert ceilings.endswith("from report counters x measured clock"), ceilings
