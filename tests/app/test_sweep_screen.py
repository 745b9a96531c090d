"""The Sweep screen, driven by Textual's Pilot on real V100 GEMM launches, checked against
core.scaling."""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import plotext as plt
import pytest
from flopscope.core import Report, read_report
from flopscope.core.analysis.scaling import Slice, load_sweep, point_table, slices
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import run_sweep, sweep_app
from flopscope.tui.app.screens.help import HelpScreen
from flopscope.tui.app.screens.kernels import PushedKernelsScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.sweep import METRICS, SweepScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.app.widgets.line_plot import LinePlot, Series, build_line_plot, is_log
from flopscope.tui.presentation import format as fmt
from rich.cells import cell_len
from rich.console import Console
from textual.widgets import Input

from ..conftest import fixture_path, settle
from ..helpers.app import pushed_kernels
from ..helpers.raw_csv import launches, raw_csv
from ..helpers.sweep_reports import shuffled

SIZES = [(80, 24), (120, 40)]
GPU = "Tesla V100-SXM2-16GB"  # the fixture's GPU: gives the efficiency columns real values
COLUMNS = [
    "batch_size",
    "flop",
    "flop_per_sample",
    "dram_bytes",
    "duration_s",
    "flop_per_s",
    "flops_efficiency",
    "bandwidth_efficiency",
    "kernels",
]


def batch_sweep(
    points: list[tuple[float, Report]], title: str, tolerance: float = 0.05
) -> FlopscopeApp:
    """The sweep app on one line: batch size varies, nothing else."""
    return sweep_app([Slice("batch_size", {}, points)], title, tolerance)


def screen_text(app) -> str:
    """The whole screen as plain text (as `App.export_screenshot` renders it)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def flat(text: str) -> str:
    """Screen text with wrapping undone, for phrases that may break across lines at 80 columns (the
    bar that marks the focused findings at each line's start goes too)."""
    return re.sub(r"\s+", " ", re.sub(r"(?m)^▌", "", text))


def plot_text(app) -> str:
    plot = app.screen.query_one(LinePlot)
    return plot.render().plain


# -- the table
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
async def test_table_has_one_row_per_point_in_parameter_order(reports, size):
    points = shuffled(reports)
    app = batch_sweep(points, "gemm")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        table = screen.query_one(KernelTable)
        rows = table.model.rows
        assert rows["batch_size"].tolist() == sorted(reports)
        assert rows["flop"].tolist() == [reports[n].summary().total_flop for n in sorted(reports)]
        # What is on screen: a header line, then the points in order, FLOP as the engine's total.
        shown = [line.split() for line in table.visible_text()[1:] if line.strip()]
        assert [float(cells[0]) for cells in shown] == sorted(reports)[: len(shown)]
        # at 80x24 the table scrolls (up/down reach the rest); the plot gets the room
        assert len(shown) >= 5
        for cells, n in zip(shown, sorted(reports), strict=False):
            assert " ".join(cells[1:3]) == fmt.si(reports[n].summary().total_flop)
        text = flat(screen_text(app))
        assert "Sweep gemm · batch_size · 8 point(s)" in text
        # 2*20480^3 per launch, exactly linear
        assert "FLOP = 17.2 T × batch_size + 0 (R² 1.0000)" in text


@pytest.mark.parametrize("size", SIZES)
async def test_table_scrolls_to_every_point(reports, size):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        table = app.screen.query_one(KernelTable)
        for _ in range(len(reports) - 1):
            await pilot.press("down")
        await pilot.pause()
        assert table.cursor_row == len(reports) - 1
        assert any(line.split()[:1] == ["128"] for line in table.visible_text())
        assert "batch_size = 128" in plot_text(app)


# -- findings and fits
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
async def test_constant_flops_series_shows_the_finding(reports, size):
    """The same run at every point: the parameter never reached the program. The app says so up
    top."""
    points = [(float(n), reports[8]) for n in (1, 2, 4, 8)]
    app = batch_sweep(points, "stuck")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = flat(screen_text(app))
        assert "! FLOPs (1.374e+14) and DRAM bytes" in text
        assert "are identical at every batch_size" in text
        # All three fits: FLOP, DRAM bytes and time are the same numbers at every point, so no
        # slope, no R².
        assert (
            text.count("R² n/a: constant") == 3
            and len(re.findall(r" = 0 (?:B |s )?× batch_size", text)) == 3
        )


async def test_two_batch_sizes_have_no_r2(reports):
    """Two values: any line passes through both, so the fits said R² 1.0000 whatever the data."""
    app = batch_sweep([(1.0, reports[1]), (8.0, reports[8])], "two")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = flat(screen_text(app))
        assert "FLOP = 17.2 T × batch_size + 0 (R² n/a: only 2 batch_size values)" in text
        assert "R² 1.0000" not in text


async def test_tolerance_is_the_clis(reports):
    """32 GEMMs labelled 33: FLOP/batch_size drifts 3.1%, flagged at 1% tolerance, not at the
    default 5%."""
    points = [(32.0, reports[32]), (33.0, reports[32]), (64.0, reports[64])]
    for tolerance, flagged in ((0.05, False), (0.01, True)):
        app = batch_sweep(points, "gemm", tolerance)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert ("FLOP/batch_size varies by" in flat(screen_text(app))) == flagged


async def test_a_growing_series_has_no_constant_finding_but_names_the_new_kernel(reports):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        text = flat(screen_text(app))
        assert "identical at every" not in text
        assert (
            "! kernel InitializeMatrix_kernel<__half, (bool)1> runs only at batch_size = 4, 8"
            in text
        )


# -- drill-down
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
async def test_enter_opens_the_selected_points_kernels_and_escape_returns(reports, size):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("enter")  # batch size 1: the GEMM alone
        screen = await pushed_kernels(app, pilot)
        assert (
            screen.model.rows["kernel_full"].tolist()
            == reports[1].group("name")["kernel_full"].tolist()
        )
        assert "batch_size = 1 (point 1 of 8)" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, SweepScreen))
        # batch size 4: the GEMM x4 and the init kernel
        await pilot.press("down", "down", "up", "down", "enter")
        screen = await pushed_kernels(app, pilot)
        rows = screen.model.rows
        expected = reports[4].group("name")
        assert rows["kernel_full"].tolist() == expected["kernel_full"].tolist() and len(rows) == 2
        assert rows["count"].tolist() == [4, 1]
        assert rows["flop"].sum() == pytest.approx(reports[4].summary().total_flop, rel=1e-12)
        text = screen_text(app)
        assert "batch_size = 4 (point 3 of 8)" in text and "InitializeMatrix_kernel" in text
        # the point's exports say which point
        assert app.export_name("name").name == "gemm-batch_size4-name.csv"
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, SweepScreen))
        assert app.screen.query_one(KernelTable).cursor_row == 2  # the selection is where it was


async def test_escape_on_the_first_screen_stays_and_q_quits(reports):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SweepScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (None, 0)


# -- the plot
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
async def test_m_cycles_the_plotted_metric_and_survives_repaints_and_resizes(reports, size):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        first = plot_text(app)
        assert first.startswith("FLOP vs batch_size (log-log)")  # 1..128 spans two decades
        seen = [first]
        for metric in METRICS[1:]:
            await pilot.press("m")
            await pilot.pause()
            seen.append(plot_text(app))
            assert seen[-1].startswith(f"{metric.title.format(param='batch_size')} vs batch_size")
        assert len(set(seen)) == len(METRICS)
        # divided by the parameter, named after it
        assert seen[1].startswith("FLOP/batch_size vs batch_size")
        for _ in range(2):  # repaint twice: same text
            app.screen.refresh()
            app.screen.query_one(LinePlot).refresh()
            await pilot.pause()
            assert plot_text(app) == seen[-1]
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        await pilot.resize_terminal(*size)
        await pilot.pause()
        assert plot_text(app) == seen[-1]
        await pilot.press("m")  # back to the first metric, after all that
        await pilot.pause()
        assert plot_text(app) == first
        assert "FLOP vs batch_size" in screen_text(app)


async def test_a_tiny_terminal_says_so_instead_of_drawing(reports):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        assert "Too small for the plot" in plot_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "FLOP vs batch_size" in plot_text(app)


def test_axes_are_log_log_only_over_two_decades_of_positive_values():
    fmt_si = fmt.si
    assert is_log(Series((1, 10, 100), (1.0, 2.0, 3.0), "n", "y", fmt_si))
    # under two decades
    assert not is_log(Series((1, 2, 4, 8), (1.0, 2.0, 3.0, 4.0), "n", "y", fmt_si))
    assert not is_log(Series((1, 10, 100), (1.0, 0.0, 3.0), "n", "y", fmt_si))  # a zero has no log
    assert not is_log(Series((0, 10, 100), (1.0, 2.0, 3.0), "n", "y", fmt_si))
    # unknown values are skipped
    assert is_log(Series((1, 10, 100), (1.0, math.nan, 3.0), "n", "y", fmt_si))


@pytest.mark.parametrize("color", [True, False])
def test_line_plot_builds_are_pure_and_exactly_sized(color):
    series = Series(
        (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0),
        tuple(3.4e11 * 2**k for k in range(8)),
        "batch_size",
        "FLOP",
        fmt.si,
    )
    first = build_line_plot(series, 78, 14, selected=3, color=color)
    other = Series((1.0, 2.0), (math.nan, 5.0), "n", "Time", fmt.seconds)
    # another plot between must not leak into this one
    build_line_plot(other, 50, 10, selected=0, color=color)
    assert build_line_plot(series, 78, 14, selected=3, color=color) == first
    lines = plt.uncolorize(first).rstrip("\n").split("\n")
    assert len(lines) == 14 and all(cell_len(line) == 78 for line in lines)
    text = "\n".join(lines)
    assert "◆" in text
    ticks = re.findall(r"([\d.]+ [GT])┤", text)  # decade ticks, in the metric's units
    assert ticks == ["10 T", "1 T"]
    tall = plt.uncolorize(build_line_plot(series, 78, 30, selected=3, color=color))
    # room: 1-2-5
    assert re.findall(r"([\d.]+ [GT])┤", tall) == [
        "50 T",
        "20 T",
        "10 T",
        "5 T",
        "2 T",
        "1 T",
        "500 G",
    ]
    assert all(label in lines[-1] for label in ("1", "2", "4", "8", "16", "32", "64", "128"))
    if not color:
        assert "\x1b[3" not in first and "\x1b[38" not in first  # NO_COLOR: no colour codes at all


def test_a_flat_series_keeps_distinct_ticks_and_no_false_trend():
    """Efficiency within 0.1% at every point: the axis spans at least a tenth of a decade, labelled
    twice."""
    series = Series(
        (1.0, 2.0, 4.0, 8.0),
        (0.938, 0.938, 0.937, 0.938),
        "batch_size",
        "FLOP %Peak",
        lambda v: fmt.pct(100 * v),
    )
    text = plt.uncolorize(build_line_plot(series, 70, 11, selected=0))
    ticks = re.findall(r"([\d.]+%)┤", text)
    assert len(ticks) >= 2 and len(set(ticks)) == len(ticks)
    rows = [i for i, line in enumerate(text.splitlines()) if "•" in line or "◆" in line]
    assert max(rows) - min(rows) <= 1  # the four points sit on one or two rows, not top to bottom


def test_unknown_values_are_said_not_drawn():
    series = Series((1.0, 2.0, 4.0), (math.nan,) * 3, "batch_size", "FLOP", fmt.si)
    text = plt.uncolorize(build_line_plot(series, 60, 10, selected=0))
    assert "FLOP: unknown at every point" in text and "•" not in text


async def test_no_color_is_legible(reports, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = batch_sweep([(float(n), reports[8]) for n in (1, 2, 4)], "stuck")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.no_color
        text = flat(screen_text(app))
        assert "! FLOPs" in text and "◆" in text  # marked by text and glyphs, not by colour


# -- export and help
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
async def test_e_exports_the_table_as_shown(reports, size, tmp_path):
    points = shuffled(reports)
    app = batch_sweep(points, "gemm")
    out = tmp_path / "points.csv"
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        answer = app.screen.query_one(Input)
        assert Path(answer.value) == Path.cwd() / "gemm-sweep.csv"
        answer.value = str(out)
        await pilot.press("enter")
        await settle(pilot, out.exists)
    written = pd.read_csv(out)
    expected = point_table(points, "batch_size")[COLUMNS]
    assert written.columns.tolist() == [*COLUMNS, "run"]
    # files, not stored runs
    assert written["run"].tolist() == [f"gemm_bs{n}.csv" for n in sorted(reports)]
    assert written["batch_size"].tolist() == sorted(reports)
    for col in COLUMNS:
        assert written[col].to_numpy(dtype=float) == pytest.approx(
            expected[col].to_numpy(dtype=float), rel=1e-12, nan_ok=True
        ), col
    # the GPU is known: real efficiencies, not blanks
    assert written["flops_efficiency"].notna().all()
    # Issue 19.10: whole numbers are written as integers (`4`, not `4.0`): the batch sizes, counts
    # and FLOPs.
    with out.open(newline="") as f:
        raw = list(csv.DictReader(f))
    assert [r["batch_size"] for r in raw] == [str(n) for n in sorted(reports)]
    for col in ("kernels", "flop", "dram_bytes"):
        assert all(r[col].isdigit() for r in raw), (col, [r[col] for r in raw])


async def test_help_lists_every_key_with_a_description(reports):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        help_text = app.screen.text()
        for what in ("Open point", "Next metric", "Export", "Row down", "Quit"):
            assert what in help_text
    assert all(b.description for b in SweepScreen.BINDINGS)
    assert all(b.description for b in PushedKernelsScreen.BINDINGS)


# -- the store
# --------------------------------------------------------------------------------------------------
def test_load_sweep_builds_points_from_stored_runs(reports, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    store = Store()
    for n in (8, 2, 32):
        store.save(
            reports[n], f"gemm-bs{n}", kind="sweep", sweep="s", params={"batch_size": str(n)}
        )
    store.save(reports[1], "other", kind="sweep", sweep="t", params={"seq": "1"})
    store.close()
    with Store() as store:
        loaded = load_sweep("s", store)
        assert load_sweep("no-such-sweep", store) is None
    assert loaded is not None and len(loaded) == 1
    param, points = loaded[0].param, loaded[0].points
    assert param == "batch_size" and loaded[0].fixed == {}
    assert [v for v, _ in points] == [8.0, 2.0, 32.0]
    assert [r.summary().total_flop for _, r in points] == [
        reports[n].summary().total_flop for n in (8, 2, 32)
    ]
    table = point_table(points, param)  # the same analysis as the CLI's, from the stored runs
    assert table["flop"].tolist() == [reports[n].summary().total_flop for n in (2, 8, 32)]


def test_load_sweep_refuses_values_that_are_not_numbers(reports, tmp_path, monkeypatch):
    from flopscope.core import FlopscopeError

    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    store = Store()
    store.save(reports[1], "a", kind="sweep", sweep="s", params={"model": "small"})
    store.close()
    with pytest.raises(FlopscopeError, match="must be a number"), Store() as store:
        load_sweep("s", store)


def test_run_sweep_app_without_points_exits_2(capsys):
    assert run_sweep([], "empty") == 2
    assert "no points" in capsys.readouterr().err


# -- sweeps over several parameters
# ---------------------------------------------------------------------------
def product_runs(reports) -> list[tuple[dict, Report]]:
    """batch_size x seq, stored in product order; the work of a point is batch_size * seq real GEMM
    launches."""
    return [
        ({"batch_size": str(b), "seq": str(s)}, reports[b * s]) for b in (1, 2, 4) for s in (1, 2)
    ]


def test_two_parameters_are_analysed_one_line_at_a_time(reports):
    lines = slices(product_runs(reports))
    assert [(line.param, line.fixed) for line in lines] == [
        ("batch_size", {"seq": "1"}),
        ("batch_size", {"seq": "2"}),
        ("seq", {"batch_size": "1"}),
        ("seq", {"batch_size": "2"}),
        ("seq", {"batch_size": "4"}),
    ]
    at_seq2 = lines[1]
    table = point_table(at_seq2.points, "batch_size")
    assert table["batch_size"].tolist() == [1, 2, 4]
    assert table["flop"].tolist() == [reports[n].summary().total_flop for n in (2, 4, 8)]
    # within a line per-sample FLOPs hold; mixing the lines would make them drift
    for line in lines[:2]:
        per_sample = point_table(line.points, "batch_size")["flop_per_sample"]
        assert per_sample.max() / per_sample.min() - 1 < 0.05


def test_a_parameter_that_is_not_a_number_is_held_not_plotted(reports):
    runs = [
        ({"model": m, "batch_size": str(b)}, reports[b])
        for m in ("small", "big")
        for b in (1, 2, 4)
    ]
    lines = slices(runs)
    assert [(line.param, line.fixed) for line in lines] == [
        ("batch_size", {"model": "small"}),
        ("batch_size", {"model": "big"}),
    ]


def test_stored_two_parameter_sweep_loads_as_lines(reports, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    store = Store()
    for params, report in product_runs(reports):
        store.save(
            report,
            f"p-{params['batch_size']}-{params['seq']}",
            kind="sweep",
            sweep="p",
            params=params,
        )
    store.close()
    with Store() as store:
        lines = load_sweep("p", store)
    assert [line.label for line in lines] == [
        "batch_size at seq=1",
        "batch_size at seq=2",
        "seq at batch_size=1",
        "seq at batch_size=2",
        "seq at batch_size=4",
    ]


async def test_n_moves_to_the_next_line_of_the_sweep(reports):
    lines = slices(product_runs(reports))
    app = sweep_app(lines, "prod")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "Sweep prod (seq=1) · batch_size · 3 point(s)" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert "Sweep prod (seq=2) · batch_size · 3 point(s)" in screen_text(app)
        rows = app.screen.query_one(KernelTable).model.rows
        assert rows["flop"].tolist() == [reports[n].summary().total_flop for n in (2, 4, 8)]
        for _ in range(4):
            await pilot.press("n")
        await pilot.pause()
        # round and back to the first line
        assert "Sweep prod (seq=1) · batch_size" in screen_text(app)


def test_parameters_that_move_together_make_one_line_each(reports):
    runs = [({"batch_size": str(b), "lr": str(0.1 * b)}, reports[b]) for b in (1, 2, 4)]
    lines = slices(runs)
    assert [(line.param, line.fixed, len(line.points)) for line in lines] == [
        ("batch_size", {}, 3),
        ("lr", {}, 3),
    ]


# -- at 80x24 with many findings: the plot keeps its rows, the findings scroll
# ---------------------------------------
@pytest.fixture(scope="module")
def mixed() -> list[tuple[float, Report]]:
    """The reviewers' sweep: the H100 report at batch sizes 1, 8 and 64, the T4 one at 16. Findings:
    different GPUs, FLOP/batch_size drifting by a factor, kernels that run only at some sizes."""
    h100 = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    t4 = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    return [(1.0, h100), (8.0, h100), (16.0, t4), (64.0, h100)]


def y_labels(plot: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*(\S[^┤\n]*)┤", plot, re.MULTILINE)]


async def test_at_80x24_the_plot_keeps_its_rows_and_two_y_labels_while_findings_scroll(mixed):
    from flopscope.tui.app.screens.sweep import PLOT_ROWS

    app = batch_sweep(mixed, "from-files")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        notes = screen.analysis.notes
        assert len(notes) >= 5
        plot = screen.query_one(LinePlot)
        assert plot.size.height >= PLOT_ROWS  # it got 4 rows and one y label
        for _ in METRICS:  # every metric: two labelled values on the y axis at least
            assert len(y_labels(plot_text(app))) >= 2, plot_text(app)
            await pilot.press("m")
            await pilot.pause()
        header = screen.query_one("#sweep-header")
        assert header.max_scroll_y > 0  # more findings than rows: they scroll
        assert flat(notes[-1]) not in flat(screen_text(app))
        await pilot.press("tab", "end")  # to the findings, to their end
        await pilot.pause()
        assert header.has_focus and header.scroll_y == header.max_scroll_y
        assert flat(notes[-1]) in flat(screen_text(app))
        drift = next(n for n in notes if "varies by" in n)
        # FLOP/batch_size from 2.26 G (at 1) to 62.5 k (at 16): a factor, and no percentage in the
        # millions
        per = [p[1].summary().total_flop / p[0] for p in mixed]
        assert drift.startswith(
            f"FLOP/batch_size varies by {max(per) / min(per):,.0f}× (largest/smallest)"
        )


async def test_flop_per_param_is_named_after_the_line_s_parameter(reports):
    app = sweep_app(slices(product_runs(reports)), "prod", 0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "FLOP/batch_size" in app.screen.query_one(KernelTable).visible_text()[0]
        for _ in range(2):
            await pilot.press("n")
        await pilot.pause()
        assert app.screen.param == "seq"
        assert "FLOP/seq" in app.screen.query_one(KernelTable).visible_text()[0]
        assert "sample" not in screen_text(app)


async def test_a_sweep_opened_with_gpu_names_it_in_the_header(tmp_path):
    """Before, `open SWEEP --gpu l4` showed the L4-judged points under a header naming no GPU, on
    every line."""
    from flopscope.tui.cli.sweep import judged_against
    from flopscope.tui.cli.view import _judged_lines

    report = read_report(fixture_path("rtx4090_torch_linear_sgemm.ncu-rep"))
    with Store(tmp_path / "flopscope.db") as store:
        for n, seq in ((1, 1), (2, 1), (1, 2), (2, 2)):
            store.save(
                report,
                f"p{n}-{seq}",
                kind="sweep",
                sweep="sw",
                params={"batch_size": n, "seq": seq},
            )
        lines = _judged_lines(load_sweep("sw", store), "l4")
    app = sweep_app(lines, "sw", judged=judged_against(lines, "l4"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert "point(s), 1 … 2 · judged against NVIDIA L4 ceilings (--gpu)" in flat(
            screen_text(app)
        )
        await pilot.press("n")  # the next line keeps it
        await pilot.pause()
        assert "Sweep sw (seq=2)" in flat(screen_text(app)) and "judged against NVIDIA L4" in flat(
            screen_text(app)
        )


# -- points stored with a warning
# ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def failing_sweep(tmp_path_factory) -> Path:
    """A real stored sweep (the ncu stand-in hands back the real T4 report): the program exits 1 at
    bs=2."""
    from ..helpers.cli import run_cli
    from ..helpers.profile import make_ncu

    home = tmp_path_factory.mktemp("home")
    out = run_cli(
        "sweep",
        "--param",
        "bs=1,2,4",
        "--ncu",
        make_ncu(home),
        "--sweep-name",
        "swf",
        "--json",
        "--",
        "sh",
        "-c",
        "test {bs} -ne 2",
        home=home,
        timeout=300,
    )
    assert out.returncode == 1 and "1 with a warning" in out.stderr, out.stderr
    return home


def stored_lines(home: Path, name: str) -> list[Slice]:
    with Store(home / "flopscope.db") as store:
        return load_sweep(name, store)


@pytest.mark.parametrize("color", [True, False])
async def test_a_point_stored_with_a_warning_is_marked_in_the_table_with_its_reason(
    failing_sweep, color, monkeypatch
):
    """Before, only the findings above named bs=2's failed program; its row read like the clean
    ones. Now its row says why, in words (legible with NO_COLOR and over SSH's 256 colours), and the
    others stay blank."""
    if not color:
        monkeypatch.setenv("NO_COLOR", "1")
    app = sweep_app(stored_lines(failing_sweep, "swf"), "swf")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(KernelTable)
        rows = {line.split()[0]: line for line in table.visible_text()[1:] if line.strip()}
        assert list(rows) == ["1", "2", "4"]  # every point on screen at 80x24
        assert "! the command" in rows["2"]  # shortened where the numbers need the room ...
        assert "!" not in rows["1"] and "!" not in rows["4"]
        assert "Warning" in table.visible_text()[0]
        assert all(len(line) <= 80 for line in screen_text(app).splitlines())
        # The numbers a suspect sweep is read by stay on screen beside the reason.
        assert {"bs", "warning", "flop", "duration_s"} <= {
            c.name for _, c, _ in table.layout_columns
        }
        await pilot.press("down")  # ... and whole on the status line for the cursor's row
        await pilot.pause()
        assert "bs = 2 (run swf-bs=2): ! the command exited with code 1" in flat(screen_text(app))


async def test_a_clean_sweep_has_no_warning_column(reports):
    app = batch_sweep(shuffled(reports), "gemm")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "Warning" not in app.screen.query_one(KernelTable).visible_text()[0]


OOM = "the command exited with code 1 (CUDA out of memory)"
OOM_SIZES = (1, 8, 32, 64)


@pytest.fixture(scope="module")
def oom_store(tmp_path_factory) -> Path:
    """The review's store: sweep `bs`, batch size N = N real V100 GEMM launches and the real init
    kernel, the bs=64 point stored with an out-of-memory warning as long as a real one (the reason
    ncu's program printed)."""
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    gemm = next(r for r in rows if "tensorop_s884gemm" in r["Kernel Name"])
    init = next(r for r in rows if "InitializeMatrix" in r["Kernel Name"])
    folder = tmp_path_factory.mktemp("oom")
    with Store(folder / "flopscope.db") as store:
        for n in OOM_SIZES:
            path = folder / f"gemm_bs{n}.csv"
            path.write_text(raw_csv([gemm] * n + [init]))
            report = read_report(path, gpu=GPU)
            if n == 64:
                report.meta = replace(report.meta, warning=OOM)
            store.save(
                report, f"bs-batch_size={n}", kind="sweep", sweep="bs", params={"batch_size": n}
            )
    return folder / "flopscope.db"


def oom_cells(db: Path) -> dict[int, dict[str, str]]:
    """Each point's cells as the table should show them whole: FLOP from the raw counters (2 x
    20480^3 per GEMM, the init kernel's SIMT FLOPs), the rest from the stored run's own summary."""
    from ..helpers.raw_csv import simt_flop

    init = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "InitializeMatrix" in r["Kernel Name"]
    )
    out = {}
    with Store(db) as store:
        for n in OOM_SIZES:
            s = store.load(f"bs-batch_size={n}").summary()
            flop = n * 2 * 20480**3 + simt_flop(init)
            out[n] = {
                "FLOP": fmt.si(flop),
                "FLOP/batch_size": fmt.si(flop / n),
                "DRAM B": fmt.si(s.dram_bytes, "B"),
                "Time": fmt.seconds(s.total_time_s),
                "FLOP/s": fmt.si(s.flop_per_s),
                "FLOP %Peak": fmt.share(s.flops_efficiency),
                "DRAM %Peak": fmt.share(s.bandwidth_efficiency),
                "Kernels": "2",
            }
    return out


@pytest.mark.parametrize("size", [(80, 24), (56, 24)])
async def test_with_a_warning_column_every_column_comes_back_whole(oom_store, size):
    """Before, at 80x24 the 48-cell Warning column (never dropped) left no room: `right` three times
    showed FLOP/batch_size as `FLOP/batch_` over `2` (for 202 M), then a header `Time F` over blank
    cells, and FLOP/s, FLOP %Peak, DRAM %Peak and Kernels never appeared. Now the Warning column
    gives way (shortened) and `right` brings every column whole, as on the Kernels screen."""
    with Store(oom_store) as store:
        lines = load_sweep("bs", store)
    expected = oom_cells(oom_store)
    app = sweep_app(lines, "bs")
    seen: set[str] = set()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        table = app.screen.query_one(KernelTable)
        for _ in range(len(table.model.columns)):
            text = table.visible_text()
            titles = [c.title for _, c, _ in table.layout_columns]
            # every title whole, none cut at the edge
            assert " ".join(text[0].split()) == " ".join(titles)
            assert titles[:2] == ["batch_size", "Warning"]
            numbers = titles[2:]
            for line in text[1:]:
                n = int(line.split()[0])
                # The numbers end the line, each whole: `202 M`, never `2` or `20…`.
                assert " ".join(line.split()).endswith(" ".join(expected[n][t] for t in numbers)), (
                    titles,
                    line,
                )
                assert "!" in line if n == 64 else "!" not in line
            assert all(cell_len(line) <= size[0] for line in screen_text(app).splitlines())
            seen.update(titles)
            await pilot.press("right")
            await pilot.pause()
    assert seen == {"batch_size", "Warning", *expected[1]}  # every column could be read


async def test_the_cursor_rows_warning_is_whole_in_the_status_line(oom_store):
    """The Warning column is shortened at 80x24 (`! the command …`); the line under the table gives
    the cursor row's reason whole, with the run it was stored as."""
    with Store(oom_store) as store:
        lines = load_sweep("bs", store)
    app = sweep_app(lines, "bs")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "batch_size = 1 (run bs-batch_size=1): no warning" in flat(screen_text(app))
        await pilot.press("end")
        await pilot.pause()
        assert f"batch_size = 64 (run bs-batch_size=64): ! {OOM}" in flat(screen_text(app))
        assert "FLOP vs batch_size" in plot_text(app)  # the plot keeps its rows


def shown_titles(header: str, titles: list[str]) -> list[str]:
    """The titles a printed header holds, in order; fails if any is cut (`batch_…`) or unknown."""
    words, out = header.split(), []
    for title in titles:
        if words[: len(title.split())] == title.split():
            out.append(title)
            words = words[len(title.split()) :]
    assert not words, header
    return out


@pytest.mark.parametrize("columns", [80, 70])
def test_the_printed_table_with_a_warning_column_drops_whole_columns(oom_store, columns):
    """Before, `COLUMNS=80 flopscope open bs --no-tui` printed `202 M  35.0 …` and at 70 `20…
    35.…`: rich squeezed the numbers beside the whole reason. Now the Warning column is cut, numbers
    stay whole and the columns that do not fit drop whole and are named, as the kernel table's."""
    from ..helpers.cli import run_cli

    out = run_cli("open", "bs", "--no-tui", home=oom_store.parent, columns=columns)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    expected = oom_cells(oom_store)
    titles = ["batch_size", "Warning", *expected[1]]
    shown = shown_titles(lines[0], titles)
    hidden = " ".join(lines).split("Hidden at ")[1]
    assert hidden.startswith(
        f"{columns} columns: {', '.join(t for t in titles if t not in shown)}; widen"
    )
    assert shown[:2] == ["batch_size", "Warning"] and len(shown) >= 4
    for line in lines[1 : 1 + len(OOM_SIZES)]:
        n = int(line.split()[0])
        assert " ".join(line.split()).endswith(" ".join(expected[n][t] for t in shown[2:])), line
        assert ("! the command" in line) == (n == 64)
    assert all(cell_len(line) <= columns for line in lines)
    assert f"although {OOM}" in " ".join(out.stdout.split())  # the reason whole, in the findings


async def test_a_json_export_carries_the_sweeps_analysis_and_each_points_run(oom_store, tmp_path):
    """Before, `e` to a .json file wrote `"meta": {}` and rows without a run: no sweep name, fits or
    findings, and no way back from a row to the stored run it came from. Now the meta is what `open
    bs --json` prints and each row names its run."""
    import json

    from ..helpers.cli import run_cli

    with Store(oom_store) as store:
        lines = load_sweep("bs", store)
    app = sweep_app(lines, "bs")
    out = tmp_path / "bs.json"
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot, out.exists)
    doc = json.loads(out.read_text())
    printed = run_cli("open", "bs", "--json", home=oom_store.parent)
    assert printed.returncode == 0, printed.stderr
    assert doc["meta"] == json.loads(printed.stdout)
    assert (
        doc["meta"]["sweep"] == "bs" and doc["meta"]["analyses"][0]["fits"]["flop"]["values"] == 4
    )
    assert any(OOM in f for f in doc["meta"]["analyses"][0]["findings"])
    assert [r["run"] for r in doc["rows"]] == [f"bs-batch_size={n}" for n in OOM_SIZES]
    with Store(oom_store) as store:  # each row's numbers are its run's
        for row in doc["rows"]:
            s = store.load(row["run"]).summary()
            assert row["batch_size"] == int(row["run"].rsplit("=", 1)[1])
            assert row["flop"] == pytest.approx(s.total_flop, rel=1e-12)
            assert row["duration_s"] == pytest.approx(s.total_time_s, rel=1e-12)
            assert row["warning"] == (OOM if row["batch_size"] == 64 else "")


async def test_the_cli_and_the_app_print_one_fit_line(tmp_path):
    """Before, `open SWEEP --no-tui` printed `flop = 1.718e+13 x batch_size + -8.202e+05` where the
    app said `FLOP = 17.2 T × batch_size − 820 k`. Real launches growing faster than the batch size
    (1, 2 and 8 GEMMs at 1, 2, 4) give a negative intercept; both now print the line computed here
    from the raw counters."""
    import numpy as np

    from ..helpers.cli import run_cli
    from ..helpers.raw_csv import simt_flop

    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    sizes = {1: 1, 2: 2, 4: 8}  # batch size: GEMM launches
    with Store(tmp_path / "flopscope.db") as store:
        for n, count in sizes.items():
            path = tmp_path / f"g{n}.csv"
            path.write_text(raw_csv([gemm] * count))
            store.save(
                read_report(path, gpu=GPU),
                f"g-{n}",
                kind="sweep",
                sweep="g",
                params={"batch_size": n},
            )
        lines = load_sweep("g", store)
    x = np.array(list(sizes), dtype=float)
    y = np.array(list(sizes.values()), dtype=float) * (2 * 20480**3 + simt_flop(gemm))
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1 - ((y - (slope * x + intercept)) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert intercept < 0
    expected = f"FLOP = {fmt.si(slope)} × batch_size − {fmt.si(-intercept)}  (R² {r2:.4f})"
    printed = run_cli("open", "g", "--no-tui", home=tmp_path, columns=120)
    assert printed.returncode == 0, printed.stderr
    assert expected in printed.stdout.splitlines()
    app = sweep_app(lines, "g")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert flat(expected) in flat(screen_text(app))
