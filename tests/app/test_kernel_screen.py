"""The Kernel screen (enter on a row): the ncu command it offers for a launch ncu did not profile,
and its keys. The function names are ncu's own, read with ncu_report (not derived by the code under
test)."""

from __future__ import annotations

import json
import math
import re
import shlex

import pytest
from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.presentation import format as fmt
from flopscope.tui.presentation.kernel_sections import sections
from flopscope.tui.presentation.reprofile import earlier_launches, recollect_argv
from textual.containers import VerticalScroll

from ..conftest import fixture_path
from ..helpers.app import make_app, ready, regrouped, screen_lines
from ..helpers.cli import run_cli
from ..helpers.raw_csv import SECONDS

H800 = "h800_sglang_flashattn_full.ncu-rep"  # launch 4 (flash_fwd_kernel): ncu recorded no values
RADIX = "a100pcie40_cub_radixsort_154k_basic.ncu-rep"


def ncu_function_names(path) -> list[str]:
    """What ncu's `-k NAME` matches (its default --kernel-name-base function), per launch, from
    ncu_report."""
    ncu_report = pytest.importorskip("ncu_report")
    context = ncu_report.load_report(str(path))
    names = []
    for i in range(context.num_ranges()):
        launches = context.range_by_idx(i)
        names += [launches.action_by_idx(j).name() for j in range(launches.num_actions())]
    return names


def to_collect(row, launches=None) -> str:
    return dict(dict(sections(row, launches))["Provenance"])["To collect"]


def test_the_unprofiled_launch_gets_a_command_a_shell_runs_as_written():
    path = fixture_path(H800)
    report = read_report(path)
    dead = report.kernels[report.kernels["status"].astype(str).str.startswith("not profiled")]
    assert len(dead) == 1
    row = dead.iloc[0]
    real = ncu_function_names(path)[int(row["launch_id"])]
    assert real == "flash_fwd_kernel"
    told = to_collect(row, report.kernels)
    command = told.rsplit(": ", 1)[1]
    # It was `ncu -k regex:flash_fwd_kernel<Flash_fwd_kernel_traits<…>, (bool)0, …> -c 1`: a display
    # ellipsis, regex metacharacters and shell redirections.
    assert shlex.split(command) == ["ncu", "-k", real, "-c", "1"]
    # the same advice whichever grouping the screen was opened from
    for group in ("name", "launch"):
        rows = report.group(group)
        flash = rows[rows["kernel"].astype(str).str.startswith("flash_fwd")].iloc[0]
        assert shlex.split(to_collect(flash, report.kernels).rsplit(": ", 1)[1]) == [
            "ncu",
            "-k",
            real,
            "-c",
            "1",
        ]


def test_the_command_names_ncus_function_name_and_skips_the_earlier_launches_of_it():
    """Every launch of the 154-launch radix sort: `-k` is ncu's own function name, `--launch-skip`
    the number of launches of that function before it (counted here from ncu_report's names)."""
    path = fixture_path(RADIX)
    report = read_report(path)
    names = ncu_function_names(path)
    assert len(names) == len(report.kernels)
    for i, row in report.kernels.iterrows():
        before = names[: int(row["launch_id"])].count(names[int(row["launch_id"])])
        argv = recollect_argv(row, earlier_launches(report.kernels, row))
        skip = ["--launch-skip", str(before)] if before else []
        assert argv == ["ncu", "-k", names[int(row["launch_id"])], *skip, "-c", "1"], i
        assert shlex.split(shlex.join(argv)) == argv
    group = report.group("name").iloc[0]  # a group of many launches is no one launch
    assert group["count"] > 1 and earlier_launches(report.kernels, group) is None


async def test_the_kernel_screen_shows_the_command_and_scrolls_with_j_k_space_home_end():
    report = read_report(fixture_path(H800))
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("g")
        await regrouped(app, pilot, "launch")
        names = screen.model.shown()["kernel"].astype(str).tolist()
        await pilot.press(
            *["j"] * next(i for i, n in enumerate(names) if n.startswith("flash_fwd")), "enter"
        )
        assert isinstance(app.screen, KernelScreen)
        body = app.screen.query_one("#kernel-body", VerticalScroll)
        assert body.max_scroll_y > 10
        await pilot.press("j", "j")
        assert body.scroll_y == 2
        await pilot.press("k")
        assert body.scroll_y == 1
        await pilot.press("space")
        assert body.scroll_y > 10
        await pilot.press("end")
        assert body.scroll_y == body.max_scroll_y
        await pilot.press("home")
        assert body.scroll_y == 0
        # A page at a time to the command (a line at a time took ~10 s), then lines until all of it
        # is shown.
        while "ncu -k" not in "\n".join(screen_lines(app)) and body.scroll_y < body.max_scroll_y:
            await pilot.press("space")
        for _ in range(10):
            text = " ".join(line.strip() for line in screen_lines(app))
            if "ncu -k flash_fwd_kernel -c 1" in text:
                break
            await pilot.press("j")
        assert "ncu -k flash_fwd_kernel -c 1" in text


def test_the_real_ncu_takes_the_command(real_ncu, tmp_path):
    """The real ncu CLI (no GPU) parses the arguments as given and runs the program: it only finds
    no GPU."""
    import subprocess

    report = read_report(fixture_path(RADIX))
    # a launch with earlier launches of its function: --launch-skip too
    row = report.kernels.iloc[40]
    argv = recollect_argv(row, earlier_launches(report.kernels, row))
    assert "--launch-skip" in argv
    done = subprocess.run(
        [*real_ncu, *argv[1:], "true"], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    said = done.stdout + done.stderr
    assert "unrecognised option" not in said and "No kernels were profiled" in said, said


# 45 launches of one kernel, the last not profiled
TRANSPOSE = "rtx5060ti_transpose_45k_basic.ncu-rep"


def raw_durations(path) -> list[float]:
    """Each launch's gpu__time_duration.sum in seconds, read with ncu_report (NaN: ncu recorded
    none)."""
    ncu_report = pytest.importorskip("ncu_report")
    context = ncu_report.load_report(str(path))
    scale = SECONDS
    out = []
    for i in range(context.num_ranges()):
        launches = context.range_by_idx(i)
        for j in range(launches.num_actions()):
            metric = launches.action_by_idx(j).metric_by_name("gpu__time_duration.sum")
            out.append(math.nan if metric is None else metric.value() * scale[metric.unit()])
    return out


async def test_a_group_with_an_unprofiled_launch_reads_at_least_its_mean_over_timed_launches():
    """`Mean per launch 37.9 us` divided 1.70 ms by 45 launches, one of which ncu did not profile
    (no time); the mean is over the 44 timed ones, and the group's Time is a lower bound there and
    in the table."""
    path = fixture_path(TRANSPOSE)
    durations = raw_durations(path)
    timed = [d for d in durations if not math.isnan(d)]
    assert len(durations) == 45 and len(timed) == 44
    total, mean = fmt.seconds(sum(timed)), fmt.seconds(sum(timed) / len(timed))
    assert (total, mean) == ("1.70 ms", "38.7 us")
    report = read_report(path)
    assert report.group("name")["not_profiled"].tolist() == [1]
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        row = next(line for line in screen_lines(app) if line.startswith("transposeMatrix"))
        assert f"45 ≥ {total}" in row
        await pilot.press("enter")
        assert isinstance(app.screen, KernelScreen)
        text = "\n".join(" ".join(line.split()) for line in screen_lines(app))
        assert f"Total time ≥ {total}" in text
        assert "Launches 45 (1 not profiled)" in text
        assert f"Mean per launch (of 44 timed) {mean}" in text
    # The printed table and --json say it too.
    out = run_cli("report", path, "--json", columns=80)
    assert json.loads(out.stdout)["rows"][0]["not_profiled"] == 1
    assert f"≥ {total}" in run_cli("report", path, columns=80).stdout


async def test_a_tensor_precision_is_spelled_one_way_on_every_screen(tmp_path):
    """An HGEMM accumulating in FP16 and FP32. Before: its FP16-accumulate tensor work read `Tensor
    FP16_ACC16` on the Kernel screen, `Tensor FP16/16 FLOP` in the sort list, `TC fp16/acc16` in the
    table. Now every place spells it as the printed table does (`flopscope report`, the independent
    source): `TC fp16/acc16`."""
    from flopscope.tui.app.screens.sort import SortScreen

    from ..helpers.raw_csv import mixed_accumulate_hgemm

    path = mixed_accumulate_hgemm(tmp_path / "hgemm.csv")
    printed = run_cli("report", path, columns=120).stdout
    assert "TC fp16/acc16+TC fp16" in printed
    app = make_app(read_report(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("o")
        labels = [label for _, label in app.screen.choices] + app.screen.empty
        assert isinstance(app.screen, SortScreen)
        assert any(label.startswith("TC fp16/acc16 FLOP") for label in labels)
        assert not [label for label in labels if label.startswith("Tensor FP")]
        await pilot.press("escape", "enter")
        assert isinstance(app.screen, KernelScreen)
        body = app.screen.query_one("#kernel-body", VerticalScroll)
        text = []
        while True:  # every line of the screen, scrolled through with the keys
            text += screen_lines(app)
            if body.scroll_y >= body.max_scroll_y:
                break
            await pilot.press("pagedown")
        text = "\n".join(text)
        assert "TC fp16/acc16 " in text and "FP16_ACC16" not in text and "Tensor FP16" not in text


# -- issue 19.3: every empty cell says why
# ----------------------------------------------------------------------------
def screen_values(row) -> dict[str, str]:
    return {label: value for _, items in sections(row) for label, value in items}


def test_integer_mma_says_it_has_no_flop_ceiling_not_not_collected():
    """A100 CUTLASS IMMA GEMM: `% of peak not collected` advised `--gpu`, which changes nothing. The
    launches whose tensor work is IMMA only are found from ncu's own pipe counters."""
    ncu_report = pytest.importorskip("ncu_report")
    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    launches = ncu_report.load_report(str(path)).range_by_idx(0)
    imma = []
    for i in range(launches.num_actions()):
        a = launches.action_by_idx(i)
        pct = {
            p: a.metric_by_name(
                f"sm__inst_executed_pipe_tensor_op_{p}.sum.pct_of_peak_sustained_active"
            )
            for p in ("imma", "hmma", "dmma")
        }
        if (
            pct["imma"].as_double() > 0
            and pct["hmma"].as_double() == 0
            and pct["dmma"].as_double() == 0
        ):
            imma.append(i)
    assert imma
    rows = read_report(path).group("launch")
    for i in imma:
        values = screen_values(rows[rows["launch_id"] == i].iloc[0])
        for label in (
            "% of peak",
            "% of roof",
            "Attainable",
            "Compute ceiling",
            "Ceiling source",
            "Bound",
            "Precision judged",
        ):
            assert "integer MMA" in values[label], (label, values[label])
        assert not any(
            "--gpu" in v or (v.startswith("not collected") and "To collect" not in v)
            for v in values.values()
        ), values


def test_a_kernel_without_flops_is_judged_by_memory_with_a_number():
    """V100 set_halo (ncu counts no FP instructions): its % of roof is a number, its precision says
    why none."""
    ncu_report = pytest.importorskip("ncu_report")
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    launches = ncu_report.load_report(str(path)).range_by_idx(0)
    rows = read_report(path).group("launch")
    checked = 0
    for i in range(launches.num_actions()):
        a = launches.action_by_idx(i)
        rates = [
            a.metric_by_name(
                f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum.per_cycle_elapsed"
            )
            for p in "dfh"
            for op in ("add", "mul", "fma")
        ]
        fp = sum(r.as_double() for r in rates if r is not None)
        if fp:
            continue
        values = screen_values(rows[rows["launch_id"] == i].iloc[0])
        # A number, and what it is of (issue 41.6): the bandwidth reached at the level that bounds
        # it, of its peak.
        judged = re.fullmatch(
            r"([\d.]+)% of the (DRAM|L2|L1) roof: ([\d.]+) (\w?)B/s of ([\d.]+) (\w?)B/s",
            values["% of roof"],
        )
        assert judged, values["% of roof"]
        scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
        rate, peak = (float(judged[i]) * scale[judged[i + 1]] for i in (3, 5))
        assert float(judged[1]) == pytest.approx(100 * rate / peak, rel=0.015, abs=0.06)
        assert "no FLOPs" in values["Precision judged"] and "memory" in values["Precision judged"]
        checked += 1
    assert checked == 2


def test_a_page_with_nothing_counted_does_not_say_all_counted_and_gives_one_remedy(tmp_path):
    """B200 raw page (time only): it said `Estimated nothing: all counted`, and the CLI gave seven
    lines, each with its own ncu option."""
    path = fixture_path("b200_torch_sdpa_auto_raw.csv")
    report = read_report(path)
    values = screen_values(report.group("name").iloc[0])
    assert "all counted" not in values["Estimated"] and "not collected" in values["Estimated"]
    assert values["To collect"].startswith("flopscope profile --metrics ")
    for label in ("All FLOPs", "FLOP/s", "% of peak", "DRAM total", "AI vs DRAM"):
        assert "not collected" in values[label] and "To collect" in values[label], (
            label,
            values[label],
        )
    out = run_cli("report", path)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "not collected" in line]
    assert len(lines) == 1 and "collect them all with `flopscope profile --metrics " in lines[0], (
        out.stderr
    )
    option = lines[0].split("`flopscope profile --metrics ")[1].split("`")[0]
    for metric in (
        "dram__bytes_read.sum",
        "lts__t_bytes.sum",
        "l1tex__t_bytes.sum",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    ):
        assert metric in option.split(","), metric


# -- issue 19.5: one peak per screen
# --------------------------------------------------------------------------------
async def test_the_kernel_screens_plot_uses_the_peak_its_numbers_use_with_the_datasheet_beside_it():
    """Demo, the bf16 nvjet GEMM: its numbers were judged against 991 TFLOP/s (its launches' clock)
    while its plot drew the run's 1.07 PFLOP/s. NVIDIA quotes 989.4 TFLOP/s dense BF16 at 1830 MHz
    (Hopper whitepaper); the launches' clock is ncu's smsp__cycles_elapsed.avg.per_second, weighted
    by their time."""
    from pathlib import Path

    from flopscope.tui.app.widgets.kernel_table import KernelTable

    demo = (
        Path(__file__).resolve().parents[2]
        / "tui"
        / "examples"
        / "train_transformer_bf16_bs8.ncu-rep.xz"
    )
    report = read_report(demo)
    launches = report.kernels[
        report.kernels["kernel"].astype(str) == "nvjet_sm90_tst_64x64_64x13_2x1_v_bz_NNT"
    ]
    assert len(launches) and (launches["precision"].astype(str) == "tensor_bf16").all()
    clock = (launches["sm_clock_hz"] * launches["duration_s"]).sum() / launches["duration_s"].sum()
    expected = 989.4e12 * clock / 1.83e9
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        at = [str(screen.model.rows["kernel"].iat[i]) for i in screen.model.order].index(
            launches["kernel"].iat[0]
        )
        for _ in range(at):
            await pilot.press("down")
        assert screen.query_one(KernelTable).cursor_row == at
        await pilot.press("enter")
        await pilot.pause()
        kernel = app.screen
        assert isinstance(kernel, KernelScreen)
        (bf16,) = [c for c in kernel.roofline.compute if c.name == "tensor_bf16"]
        assert bf16.value == pytest.approx(expected, rel=1e-6)
        line = dict(dict(sections(kernel.row))["Ceilings"])["Compute ceiling"]
        assert line.startswith(fmt.si(expected, "FLOP/s")) and "datasheet 989 TFLOP/s" in line, line


def test_the_header_gives_the_datasheet_figure_beside_the_clock_scaled_ceiling():
    """Demo header: `TC BF16 1.07 PFLOP/s` above NVIDIA's 989.4 T read as a bug; the figure it was
    scaled from is beside it now, and the header names the one clock every ceiling of the run is
    taken at (issue 41.2)."""
    from pathlib import Path

    demo = (
        Path(__file__).resolve().parents[2]
        / "tui"
        / "examples"
        / "train_transformer_bf16_bs8.ncu-rep.xz"
    )
    out = run_cli("report", demo)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # the header wraps where the terminal ends
    clock = re.search(r"Ceilings at SM ([\d.]+) GHz:", text)
    assert clock and "median" not in text, text
    # NVIDIA's figure at its tensor clock, at the run's
    bf16 = 989.4e12 * float(clock.group(1)) * 1e9 / 1830e6
    assert (
        f"TC BF16 {fmt.si(bf16, 'FLOP/s')} (datasheet 989 T at 1.83 GHz) from datasheet" in text
    ), text


# -- issue 19: what ncu recorded beside the roofline (speed of light, occupancy, waves, pipes)
# -------------------------


async def kernel_screen_text(report, size=(80, 24)) -> str:
    """Every line of the Kernel screen of the table's first row, scrolled through with the keys."""
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, KernelScreen)
        body = app.screen.query_one("#kernel-body", VerticalScroll)
        text = []
        while True:
            text += screen_lines(app)
            if body.scroll_y >= body.max_scroll_y:
                break
            await pilot.press("pagedown")
    return "\n".join(" ".join(line.split()) for line in text)


async def test_the_kernel_screen_shows_ncus_speed_of_light_and_occupancy_as_the_file_has_them():
    import csv

    path = fixture_path("t4_nsightful_copy_blocked_details.csv")
    # The first of a name: "Memory Throughput" is the speed of light's % before the Memory
    # Workload's byte/s.
    cells: dict[str, str] = {}
    for row in csv.DictReader(
        line for line in path.read_text().splitlines() if not line.startswith("==")
    ):
        cells.setdefault(row["Metric Name"], row["Metric Value"])
    text = await kernel_screen_text(read_report(path))
    assert "Speed of light" in text and "Occupancy" in text
    # ncu printed 1.30, 61.84, 96.26, 100 and 6.40; the screen rounds to one decimal.
    assert f"SM (compute) {float(cells['Compute (SM) Throughput']):.1f}%" in text
    assert f"Memory {float(cells['Memory Throughput']):.1f}%" in text
    assert f"Achieved {float(cells['Achieved Occupancy']):.1f}%" in text
    assert f"Theoretical {float(cells['Theoretical Occupancy']):.1f}%" in text
    assert f"Limited by warps ({cells['Block Limit Warps']} blocks/SM)" in text
    assert f"Waves per SM {fmt.ratio(float(cells['Waves Per SM']))}" in text
    assert "Per launch" not in text  # one launch: its own numbers


async def test_a_group_says_its_numbers_are_time_weighted_means():
    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    first = report.group("name").iloc[0]
    assert first["count"] == 2
    text = await kernel_screen_text(report, size=(120, 40))
    # speed of light, occupancy, pipes, warp stalls
    assert text.count("Per launch time-weighted mean of 2 launches") == 4
    assert f"SM (compute) {first['sol_sm_pct']:.1f}%" in text and "Tensor pipe" in text


async def test_a_report_without_them_shows_no_such_sections():
    text = await kernel_screen_text(read_report(fixture_path("a100_gemm_printfp_details.csv")))
    assert "Time" in text
    assert (
        "Speed of light" not in text and "Occupancy" not in text and "Pipe utilisation" not in text
    )


async def test_blackwell_pipes_show_on_a_b200_and_nowhere_else():
    """The B200's tcgen05 tensor core and TMEM pipes, as ncu printed them (the csv module; a group's
    are its launches' time-weighted means); a Hopper report has no such rows, not even empty
    ones."""
    import csv

    path = fixture_path("b200_torch_sdpa_auto_raw.csv")
    rows = list(
        csv.DictReader(line for line in path.read_text().splitlines() if not line.startswith("=="))
    )[1:]
    report = read_report(path)
    first = report.group("name").iloc[0]
    mine = [r for r in rows if r["Kernel Name"] == first["kernel_full"]]
    assert len(mine) == 8  # the attention kernel: the most time

    def mean(metric: str) -> float:
        weights = [float(r["gpu__time_duration.sum"]) for r in mine]
        return sum(float(r[metric]) * w for r, w in zip(mine, weights, strict=True)) / sum(weights)

    text = await kernel_screen_text(report, size=(120, 40))
    assert (
        "Tensor pipe tcgen05"
        f" {mean('sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active'):.1f}%" in text
    )
    assert (
        f"TMEM pipe {mean('sm__inst_executed_pipe_tmem.avg.pct_of_peak_sustained_active'):.1f}%"
        in text
    )
    assert (
        "Uniform pipe"
        f" {mean('sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active'):.1f}%" in text
    )
    hopper = await kernel_screen_text(
        read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    )
    assert "Tensor pipe" in hopper and "tcgen05" not in hopper and "TMEM" not in hopper
