"""The hierarchical roofline: L2 and L1 ceilings beside DRAM's, and the level that bounds a kernel.

Expected values come from ncu's own counters read with ncu_report (a second formula for the same
peak, and ncu's own % of peak of the L2 counter), or from arithmetic on the numbers a test writes
into a raw page."""

from __future__ import annotations

import math

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.command import METRIC_SETS
from flopscope.core.report.report import Report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.widgets.roofline_plot import build_plot, legend, roofline_from
from flopscope.tui.presentation import format as fmt

from ..conftest import fixture_path
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.cli import run_cli
from ..helpers.raw_csv import page
from ..helpers.real_files import report_of

T4 = "t4_mlp_matadd_full.ncu-rep"  # one matrix add, --set full: L2 busier than DRAM
A100 = "a100pcie80_cutlass_gemm_full.ncu-rep"
H100 = "h100pcie_ee384_cub_agents_full.ncu-rep"
H800 = "h800_sglang_flashattn_full.ncu-rep"
V100 = "v100_ncar_miniweather_fp64_full.ncu-rep"
SECTOR = 32  # bytes: ncu's *_bytes are its sectors x 32


def actions(path) -> list:
    ncu_report = pytest.importorskip("ncu_report")
    launches = ncu_report.load_report(str(path)).range_by_idx(0)
    return [launches.action_by_idx(i) for i in range(launches.num_actions())]


def value(action, name: str) -> float:
    metric = action.metric_by_name(name)
    return math.nan if metric is None else metric.as_double()


@pytest.mark.parametrize("name", [T4, A100, H800])
def test_the_l2_ceiling_of_a_full_set_report_is_its_slices_peak_over_the_reports_time(name):
    """The engine takes sectors/s over ncu's % of peak; the same peak is also the slices' sectors
    per cycle x their elapsed cycles (summed over slices) over the duration, which uses none of
    those counters. As DRAM's, it is the device's over the whole report: all elapsed slice-cycles
    over all the time."""
    path = fixture_path(name)
    engine = report_of(path).kernels["report_peak_l2_bytes_per_s"]
    cycles = seconds = 0.0
    for a in actions(path):
        # ns in these reports; NaN for H800's broken flash_fwd_kernel
        ns = value(a, "gpu__time_duration.sum")
        if not math.isnan(ns):
            cycles += (
                SECTOR
                * value(a, "lts__t_sectors.avg.peak_sustained")
                * value(a, "lts__cycles_elapsed.sum")
            )
            seconds += ns * 1e-9
    assert engine.dropna().tolist() == pytest.approx(
        [cycles / seconds] * len(engine.dropna()), rel=1e-9
    )


def test_a_short_launch_is_bound_by_the_level_ncus_own_percentages_rank_first():
    """V100 set_halo_values_x_419 (13 us): ncu says DRAM 22.3% and L2 13.8% of peak. Its own L2
    reading (elapsed cycles over its duration) is half the long launches' (1.18 against 2.50 TB/s);
    judged by that against DRAM's report-wide peak, it read L2-bound. Every memory-bound launch of
    the full-set fixtures takes the level ncu ranks first, wherever ncu's two percentages are
    clearly apart."""
    for name in (V100, T4, H100, H800):
        path = fixture_path(name)
        rows = report_of(path).kernels
        for i, a in enumerate(actions(path)):
            dram = value(a, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
            l2 = value(a, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed")
            if rows["bound"].iloc[i] != "memory" or not 0.67 < dram / l2 < 1.5:
                continue
            assert rows["roof"].iloc[i] == ("dram" if dram > l2 else "l2"), (name, i, dram, l2)
    v100 = report_of(fixture_path(V100)).kernels
    assert v100.loc[v100["kernel"] == "set_halo_values_x_419_gpu", "roof"].tolist() == ["dram"]


def test_a_launch_with_no_flops_and_no_dram_bytes_is_bound_by_the_cache_it_streams_through():
    """Six H100 launches (thrust fills, CUB scan inits) move 1.2-1.4 MB through L2, none through
    DRAM, and do no FLOPs: no DRAM intensity (0/0), yet L2 bounds them, as it does the same fills
    with 256 DRAM bytes. Integer-MMA launches (A100 CUTLASS) stay unjudged."""
    path = fixture_path(H100)
    rows = report_of(path).kernels
    idle = [
        i
        for i, a in enumerate(actions(path))
        if value(a, "dram__bytes_read.sum") + value(a, "dram__bytes_write.sum") == 0
        and value(a, "lts__t_sectors.sum") > 0
    ]
    assert len(idle) == 6
    assert rows.loc[idle, ["bound", "roof"]].to_numpy().tolist() == [["memory", "l2"]] * len(idle)
    a100 = report_of(fixture_path(A100)).kernels
    assert (
        a100["integer_mma"].all()
        and a100["roof"].tolist() == [""] * 3
        and a100["bound"].tolist() == [""] * 3
    )


def test_a_kernel_busier_at_l2_than_at_dram_is_l2_bound_at_ncus_own_l2_percentage():
    """T4 matrix add: ncu says L2 49.98% and DRAM 44.8% of peak. The L2 roof is the lower one, and a
    kernel on it runs at its L2 share of peak: % of roof is exactly ncu's L2 percentage."""
    path = fixture_path(T4)
    a = actions(path)[0]
    l2_pct = value(a, "lts__t_sectors.sum.pct_of_peak_sustained_elapsed")
    dram_pct = value(a, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
    assert l2_pct > dram_pct  # the premise, from ncu
    row = report_of(path).kernels.iloc[0]
    assert (row["bound"], row["roof"]) == ("memory", "l2")
    assert row["pct_of_roof"] == pytest.approx(l2_pct, rel=1e-9)
    assert row["attainable_flop_per_s"] == pytest.approx(
        row["ai_l2"] * row["peak_l2_bytes_per_s"], rel=1e-12
    )


def test_a_kernel_compute_bound_by_dram_alone_is_l2_bound_on_the_hierarchy():
    """H100 generate_encoded_signal moves almost nothing through DRAM (AI 251 FLOP/B, past the FP32
    ridge) but works out of L2: judged by DRAM alone it read `compute` at 1% of peak. Its roof is
    L2's, and its % of roof is ncu's own L2 percentage."""
    path = fixture_path(H100)
    names = [a.name() for a in actions(path)]
    report = report_of(path)
    for i, a in enumerate(actions(path)):
        if names[i] != "generate_encoded_signal":
            continue
        row = report.kernels.iloc[i]
        # DRAM alone: compute
        assert row["ai_dram"] * row["peak_dram_bytes_per_s"] > row["peak_flop_per_s"]
        assert (row["bound"], row["roof"]) == ("memory", "l2")
        # On the L2 roof, % of roof is its L2 bytes/s over the report's L2 peak (ncu's L2 1.07% is
        # over its own).
        rate = SECTOR * value(a, "lts__t_sectors.sum.per_second")
        assert row["pct_of_roof"] == pytest.approx(100 * rate / report_l2_peak(path), rel=1e-9)
        assert row["pct_of_roof"] == pytest.approx(
            value(a, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed"), rel=2e-3
        )


def report_l2_peak(path) -> float:
    """The launches' L2 peaks (sectors/s over ncu's %), weighted by their time."""
    peaks, times = [], []
    for a in actions(path):
        pct = value(a, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed")
        rate = value(a, "lts__t_sectors.sum.per_second")
        if pct > 0 and not math.isnan(rate):
            peaks.append(SECTOR * rate / (pct / 100))
            times.append(value(a, "gpu__time_duration.sum"))
    return sum(p * t for p, t in zip(peaks, times, strict=True)) / sum(times)


# Launches of the roofline metric set, values chosen here (1 ms each); each peak is per cycle x its
# clock.
SIMT = [
    f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum"
    for p in "dfh"
    for op in ("add", "mul", "fma")
]
UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "smsp__cycles_elapsed.avg.per_second": "cycle/second",
    **dict.fromkeys(SIMT, "inst"),
    "sm__inst_executed_pipe_tensor.sum": "inst",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": "inst/cycle",
    "dram__bytes_read.sum": "byte",
    "dram__bytes_write.sum": "byte",
    "dram__bytes.sum.peak_sustained": "byte/cycle",
    "dram__cycles_elapsed.avg.per_second": "cycle/second",
    "lts__t_bytes.sum": "byte",
    "l1tex__t_bytes.sum": "byte",
    "lts__t_bytes.sum.peak_sustained": "byte/cycle",
    "lts__cycles_elapsed.avg.per_second": "cycle/second",
    "l1tex__t_bytes.sum.peak_sustained": "byte/cycle",
    "l1tex__cycles_elapsed.avg.per_second": "cycle/second",
}
SM_HZ, FMA_PER_CYCLE = 1.5e9, 8192  # FP32 peak 2 x 8192 x 1.5 GHz = 24.6 TFLOP/s
DRAM_PER_CYCLE, DRAM_HZ = 1024, 1.5e9  # 1.536 TB/s
L2_PER_CYCLE, L2_HZ = 2560, 1.6e9  # 4.096 TB/s
L1_PER_CYCLE, L1_HZ = 16384, 1.5e9  # 24.6 TB/s


def launch(
    fma: float, dram: float, l2: float, l1: float, seconds: float = 1e-3, kernel: str = "k"
) -> dict:
    return {
        "kernel": kernel,
        "gpu__time_duration.sum": seconds * 1e9,
        "smsp__cycles_elapsed.avg.per_second": SM_HZ,
        **dict.fromkeys(SIMT, 0),
        "sm__inst_executed_pipe_tensor.sum": 0,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": fma,
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": FMA_PER_CYCLE,
        "dram__bytes_read.sum": dram / 2,
        "dram__bytes_write.sum": dram / 2,
        "dram__bytes.sum.peak_sustained": DRAM_PER_CYCLE,
        "dram__cycles_elapsed.avg.per_second": DRAM_HZ,
        "lts__t_bytes.sum": l2,
        "l1tex__t_bytes.sum": l1,
        "lts__t_bytes.sum.peak_sustained": L2_PER_CYCLE,
        "lts__cycles_elapsed.avg.per_second": L2_HZ,
        "l1tex__t_bytes.sum.peak_sustained": L1_PER_CYCLE,
        "l1tex__cycles_elapsed.avg.per_second": L1_HZ,
    }


@pytest.fixture
def levels(tmp_path) -> Report:
    """Three launches, each bound by another level: DRAM, L2, L1; and one compute-bound launch."""
    rows = [
        launch(5e8, dram=1.2e9, l2=1.3e9, l1=2e9, kernel="stream_dram"),
        launch(5e8, dram=1e8, l2=3e9, l1=4e9, kernel="reuse_l2"),
        launch(5e8, dram=1e8, l2=2e8, l1=2e10, kernel="thrash_l1"),
        launch(1e10, dram=1e8, l2=2e8, l1=1e9, kernel="gemm"),
    ]
    return read_report(
        page(tmp_path / "levels.csv", UNITS, rows, gpu="NVIDIA H100 80GB HBM3", cc="9.0")
    )


def test_each_level_bounds_the_launch_whose_bytes_need_longest_at_its_peak(levels):
    peak = {
        "dram": DRAM_PER_CYCLE * DRAM_HZ,
        "l2": L2_PER_CYCLE * L2_HZ,
        "l1": L1_PER_CYCLE * L1_HZ,
    }
    compute = 2 * FMA_PER_CYCLE * SM_HZ
    k = levels.kernels.set_index("kernel")
    for level in peak:
        assert k[f"peak_{level}_bytes_per_s"].tolist() == pytest.approx(
            [peak[level]] * 4, rel=1e-12
        )
    for name, expected in (
        ("stream_dram", "dram"),
        ("reuse_l2", "l2"),
        ("thrash_l1", "l1"),
        ("gemm", "compute"),
    ):
        row = k.loc[name]
        assert row["roof"] == expected, name
        assert row["bound"] == ("compute" if expected == "compute" else "memory")
    # The roof by hand: min(compute peak, FLOP/bytes x peak at each level).
    for name, fma, nbytes in (
        ("reuse_l2", 5e8, {"dram": 1e8, "l2": 3e9, "l1": 4e9}),
        ("gemm", 1e10, {"dram": 1e8, "l2": 2e8, "l1": 1e9}),
    ):
        flop = 2 * fma
        roof = min(compute, *(flop / nbytes[lvl] * peak[lvl] for lvl in peak))
        assert k.loc[name, "attainable_flop_per_s"] == pytest.approx(roof, rel=1e-12)
        assert k.loc[name, "pct_of_roof"] == pytest.approx(100 * flop / 1e-3 / roof, rel=1e-12)


def test_grouped_rows_keep_their_launches_cache_ceilings(levels):
    grouped = levels.group("name").set_index("kernel")
    assert grouped.loc["reuse_l2", "roof"] == "l2"
    assert grouped.loc["thrash_l1", "peak_l1_bytes_per_s"] == pytest.approx(
        L1_PER_CYCLE * L1_HZ, rel=1e-12
    )


def test_the_header_names_the_cache_ceilings_in_bytes_per_second(levels):
    result = run_cli("report", levels.meta.source)
    ceilings = next(line for line in result.stdout.splitlines() if line.startswith("Ceilings"))
    assert f"L2 {fmt.si(L2_PER_CYCLE * L2_HZ, 'B/s')}" in ceilings
    assert f"L1 {fmt.si(L1_PER_CYCLE * L1_HZ, 'B/s')}" in ceilings


def test_a_run_stored_before_cache_ceilings_reads_its_memory_rows_as_dram_bound(levels):
    """Its rows were judged by DRAM alone and carry no `roof`: that is what bounded them then."""
    old = levels.kernels.drop(columns=["roof"])
    old["bound"] = ["memory", "memory", "memory", "compute"]
    again = Report(meta=levels.meta, kernels=old, gpu=levels.gpu)
    assert again.kernels["roof"].tolist() == ["dram", "dram", "dram", "compute"]


def test_the_roofline_and_memory_sets_collect_the_cache_peaks():
    for name in ("roofline", "memory"):
        for unit in ("lts", "l1tex"):
            assert f"{unit}__t_bytes.sum.peak_sustained" in METRIC_SETS[name]
            assert f"{unit}__cycles_elapsed.avg.per_second" in METRIC_SETS[name]


def test_the_plot_draws_and_names_the_l2_slope():
    report = report_of(fixture_path(H100))
    data = roofline_from(report.group("name"), report.ceilings())
    assert [c.name for c in data.caches] == ["l2"]
    expected = report_l2_peak(fixture_path(H100))  # the run's L2 ceiling
    assert data.caches[0].value == pytest.approx(expected, rel=1e-9)
    text = build_plot(data, 78, 18, 0, color=False).plain
    assert " L2 " in text and "/" in text, text
    assert any(
        label.startswith(f"/ L2 {fmt.si(expected, 'B/s')}")
        for label, _ in legend(data, 0, color=False)
    )


async def test_the_app_shows_the_bounding_level_and_filters_by_it():
    report = read_report(fixture_path(T4))
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        row = next(line for line in screen_lines(app) if "matrix_addition2D" in line)
        assert row.rstrip().split()[-1] == "l2", row  # Bound: 80 columns have room for it
        for typed, rows in (("bound:l2", 1), ("bound:dram", 0), ("bound:memory", 1)):
            await pilot.press("slash", *typed, "enter")
            await pilot.pause()
            assert len(screen.model) == rows, typed
        await pilot.press("slash", "ctrl+u", "enter", "enter")
        for _ in range(100):
            if isinstance(app.screen, KernelScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, KernelScreen)
        text = "\n".join(screen_lines(app))
        for _ in range(20):
            if "memory (l2 roof)" in text:
                break
            await pilot.press("down")
            text = "\n".join(screen_lines(app))
        assert "memory (l2 roof)" in text, text


def test_a_group_keeps_the_cache_ceiling_of_the_launches_that_measured_it(tmp_path):
    """Metric sets differ between launches of one report: a launch without the L2 peak counters has
    no L2 ceiling of its own, and must not count as a ceiling of 0 in its group's time-weighted one
    (it halved it)."""
    lacking = launch(5e8, dram=1e8, l2=3e9, l1=4e9, kernel="reuse_l2")
    for metric in ("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"):
        lacking[metric] = None
    rows = [launch(5e8, dram=1e8, l2=3e9, l1=4e9, kernel="reuse_l2"), lacking]
    report = read_report(
        page(tmp_path / "mixed.csv", UNITS, rows, gpu="NVIDIA H100 80GB HBM3", cc="9.0")
    )
    assert math.isnan(report.kernels["peak_l2_bytes_per_s"].iloc[1])
    group = report.group("name").iloc[0]
    assert group["peak_l2_bytes_per_s"] == pytest.approx(L2_PER_CYCLE * L2_HZ, rel=1e-12)
    flop, seconds = 2 * 2 * 5e8, 2e-3
    # both launches' L2 bytes at the L2 peak: below compute and DRAM
    roof = flop / 6e9 * L2_PER_CYCLE * L2_HZ
    assert group["attainable_flop_per_s"] == pytest.approx(roof, rel=1e-12)
    assert group["pct_of_roof"] == pytest.approx(100 * flop / seconds / roof, rel=1e-12)


async def test_b_after_a_typed_level_filter_goes_on_to_compute():
    """`/ bound:l2` then `b` raised ValueError ('l2' is not one of all|memory|compute) and closed
    the app."""
    app = make_app(read_report(fixture_path(T4)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash", *"bound:l2", "enter")
        await pilot.pause()
        assert screen.query_state.bound == "l2" and len(screen.model) == 1
        for expected in ("compute", "all"):
            await pilot.press("b")
            await pilot.pause()
            assert screen.query_state.bound == expected


def test_a_kernel_without_flops_gets_its_percent_of_roof_at_the_limiting_memory_level():
    """Issue 19.4: a copy or fill (no FLOPs) read `% of roof not collected` though its bytes are
    there. Its % of roof is the bandwidth it reached at the level that limits it, over that level's
    peak: V100 set_halo (no FLOPs, DRAM-bound), from ncu's own byte and time counters."""
    path = fixture_path(V100)
    rows = report_of(path).group("launch")
    checked = 0
    for index, a in enumerate(actions(path)):  # the launch ID is the action's index in the report
        if not a.name().startswith("set_halo_values"):
            continue
        row = rows[rows["launch_id"] == index].iloc[0]
        assert row["flop"] == 0 and row["roof"] == "dram"
        dram = value(a, "dram__bytes_read.sum") + value(a, "dram__bytes_write.sum")
        seconds = value(a, "gpu__time_duration.sum") * 1e-9
        assert row["pct_of_roof"] == pytest.approx(
            100 * dram / seconds / row["peak_dram_bytes_per_s"], rel=1e-6
        )
        checked += 1
    assert checked == 2


def test_the_tables_bound_column_speaks_the_exports_roof_words(tmp_path):
    """Issue 19.4: the table said `DRAM`/`L2` where the export's `roof` says `dram`/`l2` and
    `bound:` takes them."""
    import csv

    from flopscope.tui.presentation.text_report import printed_kernel_table

    path = fixture_path(V100)
    out = tmp_path / "k.csv"
    assert run_cli("export", path, "-o", out).returncode == 0
    with out.open() as f:
        exported = {r["kernel_full"]: r["roof"] for r in csv.DictReader(f)}
    rows = report_of(path).group("name")
    table, _ = printed_kernel_table(rows, 200)
    shown = table.column("Bound")
    assert shown == [exported[f] for f in rows["kernel_full"]]
    assert set(shown) >= {"compute", "dram"}
