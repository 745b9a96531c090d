"""A launch measured above its own ceiling is flagged, once per kind, wherever a report's warnings
show.

The over-ceiling cases are real reports judged against the wrong GPU, as a user can do with `--gpu`:
an RTX 5090 GEMM (a CSV that names no GPU, only CC 12.0) against the RTX 5070's datasheet, and V100
CFD kernels against a T4's. Every value a warning quotes is computed here from the raw CSV cells and
the datasheet numbers, never taken from the engine; the same files judged against the right GPU are
not flagged."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.report.report import with_gpu

from ..conftest import fixture_path, settle
from ..helpers.cli import run_cli
from ..helpers.raw_csv import page

GEMM = "rtx5090_dsocr_cutlass_gemm_details.csv"
CFD = "v100_xplacer_cfd_details_nsight2020.log"
BF16_OPS = "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
# Datasheets (NVIDIA's product pages): dense BF16 tensor FLOP/s with FP32 accumulate at the boost
# clock they are derived at; T4 memory bandwidth.
RTX5070_BF16, RTX5070_CLOCK = 61.7e12, 2512e6
RTX5090_BF16, RTX5090_CLOCK = 209.5e12, 2407e6
T4_DRAM = 320e9
# the engine's: 1% above a ceiling is clock/counter rounding, not yet a wrong ceiling
TOLERANCE = 1.01


def details_cells(path: Path) -> dict[tuple[str, str], tuple[str, str, float]]:
    """(launch ID, metric name) -> (kernel name, unit, value) of an ncu details CSV, read with the
    csv module."""
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    rows = csv.reader(lines[next(i for i, line in enumerate(lines) if line.startswith('"ID"')) :])
    col = {h: i for i, h in enumerate(next(rows))}
    out = {}
    for r in rows:
        if len(r) > col["Metric Value"] and r[col["Metric Name"]]:
            value = r[col["Metric Value"]].replace(",", "")
            if value not in ("", "n/a"):
                out[(r[0], r[col["Metric Name"]])] = (
                    r[col["Kernel Name"]],
                    r[col["Metric Unit"]],
                    float(value),
                )
    return out


def gemm_figures() -> tuple[str, float, float]:
    """The RTX 5090 GEMM: (kernel, measured BF16 FLOP/s, SM clock in Hz) from its cells."""
    cells = details_cells(fixture_path(GEMM))
    kernel, _, ops = cells[("0", BF16_OPS)]
    _, unit, us = cells[("0", "gpu__time_duration.sum")]
    _, clock_unit, ghz = cells[("0", "SM Frequency")]
    assert (unit, clock_unit) == ("us", "Ghz")
    return kernel, ops / (us * 1e-6), ghz * 1e9


def test_a_gemm_judged_by_a_slower_gpu_says_so_once_with_its_rate_and_ceiling():
    """The RTX 5090 GEMM ran 113 TFLOP/s of BF16; an RTX 5070's datasheet, scaled to the 2.00 GHz it
    ran at, allows 49.1. Before: `%Peak 230.9%` and nothing else. Now one stderr line names the
    kernel, both numbers, the source of the ceiling and what to check; the exit code stays 0, as for
    the other report warnings."""
    kernel, measured, clock = gemm_figures()
    ceiling = RTX5070_BF16 * clock / RTX5070_CLOCK
    out = run_cli("report", fixture_path(GEMM), "--gpu", "rtx5070")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "ceiling" in line]
    assert len(lines) == 1, out.stderr
    short = kernel.removeprefix("void ").removesuffix("(Params)")
    assert (
        lines[0]
        == f"{fixture_path(GEMM)}: 1 launch measured above its FLOP ceiling, which no kernel can"
        f" do: {short} (launch 0) at {measured / 1e12:.0f} TFLOP/s,"
        f" {100 * measured / ceiling:.1f}% of its tensor_bf16 ceiling {ceiling / 1e12:.1f}"
        f" TFLOP/s (datasheet of NVIDIA GeForce RTX 5070 @ measured clock {clock / 1e9:.2f}"
        " GHz); the ceiling or the FLOP count is wrong for it: check --gpu rtx5070 against the"
        " board it ran on (GPUs of CC 12.0: rtx5090, rtx5070, rtx5060ti), or check the FLOP"
        " count"
    )
    # the arithmetic above, as read
    assert "230.9% of its tensor_bf16 ceiling 49.1 TFLOP/s" in lines[0]


def test_report_json_and_export_carry_the_finding_in_meta(tmp_path):
    _, measured, clock = gemm_figures()
    ceiling = RTX5070_BF16 * clock / RTX5070_CLOCK
    out = run_cli("report", fixture_path(GEMM), "--gpu", "rtx5070", "--json")
    assert out.returncode == 0, out.stderr
    [found] = json.loads(out.stdout)["meta"]["over_ceiling"]
    assert (found["kind"], found["launches"], found["launch_id"], found["precision"]) == (
        "FLOP",
        1,
        0,
        "tensor_bf16",
    )
    assert found["measured"] == pytest.approx(measured, rel=1e-9)
    assert found["ceiling"] == pytest.approx(ceiling, rel=1e-9)
    assert found["pct_of_ceiling"] == pytest.approx(100 * measured / ceiling, rel=1e-9)
    assert (
        found["problem"] in out.stderr
        and found["fix"] in out.stderr
        and "check --gpu rtx5070" in found["fix"]
    )
    target = tmp_path / "gemm.json"
    out = run_cli("export", fixture_path(GEMM), "--gpu", "rtx5070", "-o", target)
    assert out.returncode == 0, out.stderr
    assert json.loads(target.read_text())["meta"]["over_ceiling"] == [found]
    # A CSV has no meta: export says it on stderr, as report does, and still writes the rows.
    out = run_cli("export", fixture_path(GEMM), "--gpu", "rtx5070", "-o", tmp_path / "gemm.csv")
    assert out.returncode == 0 and found["problem"] in out.stderr, out.stderr
    assert (tmp_path / "gemm.csv").read_text().count("\n") == 2  # header and the one launch's group


def test_the_same_gemm_judged_by_its_own_gpu_is_not_flagged():
    """Against the RTX 5090's datasheet at the same clock it ran at 65% of peak: no finding, no
    line."""
    _, measured, clock = gemm_figures()
    assert measured / (RTX5090_BF16 * clock / RTX5090_CLOCK) < 0.7
    out = run_cli("report", fixture_path(GEMM), "--gpu", "rtx5090", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["meta"]["over_ceiling"] == []
    assert "ceiling" not in out.stderr


def cfd_rates() -> dict[str, tuple[str, float]]:
    """The V100 CFD log's DRAM bandwidth per launch: ID -> (kernel, `Memory Throughput` in B/s). The
    log has throughput only, so the bytes are this rate x the duration, and bytes / duration is the
    rate again."""
    cells = details_cells(fixture_path(CFD))
    rates = {
        launch: (kernel, value)
        for (launch, metric), (kernel, unit, value) in cells.items()
        if metric == "Memory Throughput" and unit == "byte/second"
    }
    assert len(rates) == 100
    return rates


def test_dram_above_a_wrongly_chosen_gpus_bandwidth_is_flagged_and_the_right_one_is_not():
    """The program's output names a V100 (900 GB/s); `--gpu t4` (320 GB/s) puts 48 of its launches
    above the DRAM ceiling. The line names the fastest, says its bytes were derived from rates, and
    names the ncu option that takes the DRAM ceiling from the GPU itself."""
    rates = cfd_rates()
    over = {launch: kr for launch, kr in rates.items() if kr[1] > T4_DRAM * TOLERANCE}
    worst = max(over, key=lambda launch: over[launch][1])
    kernel, rate = over[worst]
    out = run_cli("report", fixture_path(CFD), "--gpu", "t4")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "ceiling" in line]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(
        f"{fixture_path(CFD)}: {len(over)} launches measured above their DRAM ceiling, which "
        f"no kernel can do: worst {kernel} (launch {worst}) at {rate / 1e9:.0f} GB/s, "
        f"{100 * rate / T4_DRAM:.1f}% of its ceiling 320 GB/s (datasheet of Tesla T4); "
    )
    assert "check --gpu t4 against the board it ran on" in lines[0]
    assert (
        "`ncu --metrics dram__bytes.sum.peak_sustained,dram__cycles_elapsed.avg.per_second`"
        in lines[0]
    )
    assert lines[0].endswith(
        "or check the DRAM byte count (its notes: dram_bytes derived from rates)"
    )
    # Judged by the V100 the program output names: every launch is below its 900 GB/s.
    assert max(rate for _, rate in rates.values()) < 900e9
    out = run_cli("report", fixture_path(CFD), "--json")
    assert json.loads(out.stdout)["meta"]["over_ceiling"] == [] and "ceiling" not in out.stderr


def test_a_stored_report_judged_again_with_another_gpu_is_checked_again():
    """The finding is computed from the launches, never stored: `open RUN --gpu` (with_gpu) judges
    anew."""
    right = read_report(fixture_path(GEMM), gpu="rtx5090")
    assert right.over_ceiling() == []
    [found] = with_gpu(right, "rtx5070").over_ceiling()
    assert found.kind == "FLOP" and found.source.startswith("datasheet of NVIDIA GeForce RTX 5070")


# A raw page of three A100 launches whose ceilings are the report's own peak counters: FP32 FFMA
# peak per cycle x SM clock, and DRAM bytes per cycle x DRAM clock. Their FLOPs and bytes are set at
# a fraction of those.
CLOCK, FFMA_PER_CYCLE, DRAM_CLOCK, DRAM_PER_CYCLE, SECONDS = 1.41e9, 6912, 1.512e9, 1280, 1e-3
FLOP_CEILING = 2 * FFMA_PER_CYCLE * CLOCK  # FFMA = 2 FLOPs: 19.49 TFLOP/s
DRAM_CEILING = DRAM_PER_CYCLE * DRAM_CLOCK  # 1.94 TB/s
SIMT = {
    f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": "inst"
    for p in "dfh"
    for op in ("add", "mul", "fma")
}
UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "smsp__cycles_elapsed.avg.per_second": "cycle/second",
    **SIMT,
    "sm__inst_executed_pipe_tensor.sum": "inst",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": "inst/cycle",
    "dram__bytes_read.sum": "byte",
    "dram__bytes_write.sum": "byte",
    "dram__bytes.sum.peak_sustained": "byte/cycle",
    "dram__cycles_elapsed.avg.per_second": "cycle/second",
}


def a100_launch(kernel: str, of_flop_ceiling: float, of_dram_ceiling: float) -> dict:
    return {
        **dict.fromkeys(SIMT, 0),
        "kernel": kernel,
        "gpu__time_duration.sum": SECONDS * 1e9,
        "smsp__cycles_elapsed.avg.per_second": CLOCK,
        "sm__inst_executed_pipe_tensor.sum": 0,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": (
            of_flop_ceiling * FLOP_CEILING * SECONDS / 2
        ),
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": FFMA_PER_CYCLE,
        "dram__bytes_read.sum": of_dram_ceiling * DRAM_CEILING * SECONDS,
        "dram__bytes_write.sum": 0,
        "dram__bytes.sum.peak_sustained": DRAM_PER_CYCLE,
        "dram__cycles_elapsed.avg.per_second": DRAM_CLOCK,
    }


def test_within_one_percent_is_rounding_and_above_it_the_count_is_named_as_the_suspect(tmp_path):
    """100.5% of its own counters' ceiling is clock/counter rounding: not flagged. 102% FLOP/s and
    101.5% DRAM are: one finding per kind, and with the GPU's own peak counters as the ceiling only
    the count can be wrong."""
    path = page(
        tmp_path / "a100.csv",
        UNITS,
        [
            a100_launch("within", 1.005, 1.005),
            a100_launch("above", 1.02, 1.015),
            a100_launch("normal", 0.5, 0.3),
        ],
        gpu="NVIDIA A100 80GB PCIe",
    )
    flop, dram = read_report(path).over_ceiling()
    assert (flop.kind, flop.launches, flop.kernel, flop.launch_id) == ("FLOP", 1, "above", 1)
    assert flop.measured == pytest.approx(1.02 * FLOP_CEILING) and flop.ceiling == pytest.approx(
        FLOP_CEILING
    )
    assert (
        "102.0% of its fp32 ceiling 19.5 TFLOP/s (report's peak counters x measured clock 1.41 GHz)"
        in flop.problem()
    )
    assert (
        flop.fix
        == "its ceiling is the GPU's own peak counters at the measured clock, so check the FLOP"
        " count"
    )
    assert (dram.kind, dram.launches, dram.kernel) == ("DRAM", 1, "above")
    assert dram.measured == pytest.approx(1.015 * DRAM_CEILING) and dram.ceiling == pytest.approx(
        DRAM_CEILING
    )
    assert "101.5% of its ceiling 1.94 TB/s" in dram.problem()


def test_a_short_launch_within_the_peak_at_its_own_dram_clock_is_not_flagged(tmp_path):
    """The DRAM ceiling takes the report's duration-weighted DRAM clock; a 5 us launch reads its own
    clock 8% higher (H100 PCIe launches of 4-7 us: up to 11%). Moving 105% of the report-wide
    ceiling is within the peak at its own reading (108%): no finding. At 112% it is over both, and
    flagged."""

    def short(kernel: str, of_report_wide: float) -> dict:
        launch = a100_launch(kernel, 0.1, 0.0)
        seconds, own_clock = 5e-6, 1.08 * DRAM_CLOCK
        # The long launch's 1 ms at DRAM_CLOCK dominates the report-wide clock: (1e-3 x 1 + 5e-6 x
        # 1.08) / 1.005e-3.
        wide = DRAM_PER_CYCLE * (1e-3 * DRAM_CLOCK + seconds * own_clock) / (1e-3 + seconds)
        return {
            **launch,
            "gpu__time_duration.sum": seconds * 1e9,
            "dram__cycles_elapsed.avg.per_second": own_clock,
            "dram__bytes_read.sum": of_report_wide * wide * seconds,
        }

    for of_report_wide, flagged in ((1.05, False), (1.12, True)):
        path = page(
            tmp_path / f"short{of_report_wide}.csv",
            UNITS,
            [a100_launch("long", 0.5, 0.3), short("short", of_report_wide)],
            gpu="NVIDIA A100 80GB PCIe",
        )
        kinds = [f.kind for f in read_report(path).over_ceiling()]
        assert ("DRAM" in kinds) == flagged, (of_report_wide, kinds)


# -- the app
# --------------------------------------------------------------------------------------------------
async def summary_of(report, size=(80, 24)) -> tuple[str, list[str]]:
    """The Kernels screen's summary (whole) and the screen's lines, once the table has filled."""
    from flopscope.tui.app.launch import kernels_app
    from flopscope.tui.app.widgets.kernel_table import KernelTable
    from flopscope.tui.app.widgets.summary import Summary

    from ..helpers.app import screen_lines

    app = kernels_app(report.meta.source, report=report)
    async with app.run_test(size=size) as pilot:
        await settle(
            pilot,
            lambda: (
                app.kernels.model is not None and not app.kernels.query_one(KernelTable).loading
            ),
        )
        summary = app.screen.query_one(Summary)
        return summary.text(summary.content_size.width).plain, screen_lines(app)


async def test_the_app_summary_warns_of_a_kernel_above_its_ceiling_in_three_lines():
    """The Kernels screen's summary says it under the GPU line (the summary's height is capped on a
    small terminal: the warning must stay), short: the numbers, the kernel cut at 40 cells, what to
    check first."""
    kernel, measured, clock = gemm_figures()
    ceiling = RTX5070_BF16 * clock / RTX5070_CLOCK
    short = kernel.removeprefix("void ").removesuffix("(Params)")
    _, screen = await summary_of(read_report(fixture_path(GEMM), gpu="rtx5070"))
    # Under the breadcrumb, the GPU line and the file line.
    at = next(i for i, line in enumerate(screen) if line.strip().startswith("Warning"))
    assert at == 3 and screen[1].strip().startswith("NVIDIA GeForce RTX 5070"), screen[:at]
    assert (
        " ".join(line.strip() for line in screen[at : at + 3])
        == f"Warning: 1 launch above its FLOP ceiling (impossible): {short[:39]}… at"
        f" {100 * measured / ceiling:.1f}% of TC BF16 {ceiling / 1e12:.1f} TFLOP/s; the ceiling"
        " or the FLOP count is wrong: check --gpu rtx5070"
    )
    _, screen = await summary_of(read_report(fixture_path(GEMM), gpu="rtx5070"), size=(60, 16))
    assert screen[2].strip() == "Warning: 1 launch above its FLOP ceiling (impossible):"
    text, _ = await summary_of(read_report(fixture_path(GEMM), gpu="rtx5090"))
    assert "ceiling (impossible)" not in text and "Warning" not in text
