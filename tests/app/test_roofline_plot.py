"""The roofline plot: log10 taken by us, plotext on linear axes, stable across repaints and
resizes."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from flopscope.core.table.roofline import Ceiling
from flopscope.tui.app.widgets import roofline_plot
from flopscope.tui.app.widgets.roofline_plot import (
    Point,
    Roofline,
    RooflinePlot,
    below_plot,
    build_plot,
    decade_label,
    legend,
    roofline_from,
)
from rich.cells import cell_len
from rich.color import ColorType
from rich.text import Text
from textual.app import App, ComposeResult

CEILINGS = [
    Ceiling("fp32", 13.2e12, "report"),
    Ceiling("fp64", 6.6e12, "report"),
    Ceiling("dram", 900e9, "report"),
]


def rows() -> pd.DataFrame:
    """Four plottable kernels and two that are not (no FLOPs; unknown bytes)."""
    return pd.DataFrame(
        {
            "kernel": ["gemm", "stencil", "copy", "reduce", "memset", "unknown"],
            "ai_dram": [80.0, 2.0, 0.05, 0.5, 0.0, np.nan],
            "flop_per_s": [9e12, 1e12, 4e10, 3e11, 0.0, 1e9],
            "pct_time": [10.0, 50.0, 5.0, 30.0, 4.0, 1.0],
            "precision": ["fp32", "fp64", "fp32", "fp32", "", "fp32"],
            "pct_of_peak": [68.0, 15.0, 0.3, 2.0, 0.0, np.nan],
            "bound": ["compute", "memory", "memory", "memory", "", ""],
            "ai_l2": [20.0, 1.0, np.nan, 0.2, np.nan, np.nan],
            "ai_l1": [10.0, np.nan, np.nan, 0.1, np.nan, np.nan],
        }
    )


def plain(text: Text) -> list[str]:
    return text.plain.rstrip("\n").split("\n")


def colours(text: Text) -> set:
    return {
        span.style.color
        for span in text.spans
        if not isinstance(span.style, str) and span.style.color
    }


def test_points_are_finite_positive_and_ordered_by_time_share():
    data = roofline_from(rows(), CEILINGS)
    assert [p.label for p in data.points] == ["stencil", "reduce", "gemm", "copy"]
    assert data.dropped == 2 and data.unknown == 1  # memset did no FLOPs; "unknown" lacks its bytes
    assert [c.name for c in data.compute] == ["fp32", "fp64"] and data.dram.value == 900e9


def test_nothing_to_plot_says_why_per_row_kind():
    """Rows with no FLOPs have no place on a log-log plot: they are not sent to collect counters
    they have."""
    from flopscope.tui.app.screens.roofline import describe

    no_work = roofline_from(rows().iloc[[4]], CEILINGS)
    assert (
        str(describe(no_work, None))
        == "No point to plot: 1 row(s) did no FLOPs or moved no DRAM bytes."
    )
    both = str(describe(roofline_from(rows().iloc[[4, 5]], CEILINGS), None))
    assert "1 row(s) did no FLOPs" in both and "1 row(s) lack counted FLOPs or DRAM bytes" in both
    assert "ncu --metrics" in both


def test_order_and_limit_select_rows():
    data = roofline_from(rows(), CEILINGS, order=np.array([0, 2, 4]), limit=1)
    assert [p.label for p in data.points] == ["gemm"] and data.beyond == 1 and data.dropped == 1


def test_decade_labels():
    assert [decade_label(k) for k in (-2, -1, 0, 1, 2, 3, 4, 9, 12, 13)] == [
        "0.01",
        "0.1",
        "1",
        "10",
        "100",
        "1k",
        "10k",
        "1G",
        "1T",
        "10T",
    ]


@pytest.mark.parametrize("color", [True, False])
def test_repeated_builds_and_resizes_give_identical_output(color):
    data = roofline_from(rows(), CEILINGS)
    first = build_plot(data, 80, 20, selected=0, color=color)
    # a second build changes nothing
    assert build_plot(data, 80, 20, selected=0, color=color) == first
    other = roofline_from(rows().iloc[:2], CEILINGS[:1])
    # another plot in between must not leak into this one
    build_plot(other, 50, 12, selected=1, color=color)
    build_plot(data, 60, 12, selected=2, color=color)
    assert build_plot(data, 80, 20, selected=0, color=color) == first
    lines = plain(first)
    assert len(lines) == 20 and all(cell_len(line) == 80 for line in lines)


def test_axes_ticks_and_labels():
    # "reduce": L2 and L1 AI
    lines = plain(build_plot(roofline_from(rows(), CEILINGS), 90, 24, selected=1))
    text = "\n".join(lines)
    for tick in ("0.01", "0.1", "1", "10", "100", "10G", "100G", "1T", "10T"):
        assert re.search(rf"(^|\s){re.escape(tick)}(┤|\s|$)", text), tick
    assert "arithmetic intensity, FLOP/byte (DRAM)" in text and "FLOP/s" in text
    assert "DRAM" in text and "FP32" in text and "ridge" in text
    # selected, its L2 and L1 AI (the others: their ranks)
    assert "◆" in text and "▲" in text and "▼" in text


def test_colours_are_256_palette_and_none_without_colour():
    data = roofline_from(rows(), CEILINGS)
    coloured = colours(build_plot(data, 80, 20, selected=0, color=True))
    # legible without truecolor
    assert coloured and all(c.type != ColorType.TRUECOLOR for c in coloured)
    assert not colours(build_plot(data, 80, 20, selected=0, color=False))


def test_legend_names_every_ceiling_and_marker():
    labels = [text for text, _ in legend(roofline_from(rows(), CEILINGS), selected=0)]
    assert labels[:3] == ["━ DRAM 900 GB/s", "━ FP32 13.2 TFLOP/s", "─ FP64 6.60 TFLOP/s"]
    assert "◆ selected" in labels and "▲ its L2 AI" in labels


def test_no_points_and_no_ceilings_still_draw():
    empty = Roofline(points=(), compute=(), dram=None, dropped=3)
    assert len(plain(build_plot(empty, 60, 14))) == 14
    lone = Roofline(points=(Point("k", 1.0, 1e9, 100.0, 0),), compute=(), dram=None)
    assert "◆" in build_plot(lone, 60, 14, selected=0).plain


class PlotApp(App):
    def compose(self) -> ComposeResult:
        yield RooflinePlot(roofline_from(rows(), CEILINGS), id="plot")


async def test_widget_survives_repaints_and_resizes():
    app = PlotApp()
    async with app.run_test(size=(100, 30)) as pilot:
        plot = app.query_one(RooflinePlot)
        first = plot.render().plain
        plot.refresh()
        await pilot.pause()
        assert plot.render().plain == first
        for size in ((80, 24), (40, 12), (25, 8), (100, 30)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            lines = plot.render().plain.split("\n")
            assert len(lines) <= plot.size.height and all(
                cell_len(line) <= plot.size.width for line in lines
            )
        assert plot.render().plain == first
        plot.select(2)
        assert plot.render().plain != first and math.isfinite(plot.data.points[2].ai)


# -- labels never cover a point; every ceiling is named on its own line
# ------------------------------------------
MW = "v100_ncar_miniweather_fp64_full.ncu-rep"
HALF = set("▀▄▌▐▖▗▘▝▚▞▙▛▜▟█")
# ranks: the top kernels
POINTS = {"◆", "▲", "▼", *roofline_plot.PRECISION_GLYPHS.values(), *"12345"}


def unlabelled(monkeypatch, data, width, height, selected) -> list[str]:
    with monkeypatch.context() as m:
        m.setattr(roofline_plot, "_label", lambda *a: None)
        return plain(build_plot(data, width, height, selected))


def check_labels(lines: list[str], bare: list[str], data: Roofline, selected: int) -> None:
    # Every cell that holds a point without labels holds the same point with them.
    for row, (line, before) in enumerate(zip(lines, bare, strict=True)):
        for col, ch in enumerate(before):
            if ch in POINTS:
                assert line[col] == ch, (row, col, line)
    text = "\n".join(lines)
    ridge = roofline_plot.ridge_of(data, selected)
    wanted = f"{ridge.name.upper()} ridge"
    # whole or not at all: `F◆64 ridge 7.38` was neither
    assert wanted in text or "ridge" not in text, text
    for glyphs, name in ((HALF, "FP32"), ({"─"}, "FP64")):
        # The name at the right end of a row whose line (its own glyph) runs up to it.
        rows = [line for line in lines if line.endswith(f" {name}│")]
        assert rows, (name, text)
        if glyphs & set(bare[lines.index(rows[0])]):
            assert rows[0][-len(name) - 3] in glyphs, (name, rows[0])


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)])
def test_miniweather_labels_sit_on_their_lines_and_off_the_points(monkeypatch, size):
    from flopscope.core import read_report

    from ..conftest import fixture_path

    report = read_report(fixture_path(MW))
    data = roofline_from(report.group("name"), report.ceilings())
    width, height = size[0], size[1] - 6  # the plot's share of the Roofline screen
    for selected in range(len(data.points)):
        lines = plain(build_plot(data, width, height, selected))
        check_labels(lines, unlabelled(monkeypatch, data, width, height, selected), data, selected)


def test_a_point_where_a_label_would_go_keeps_its_cell(monkeypatch):
    """A kernel right at the FP32 ceiling's right end: FP32's name moves off it."""
    frame = rows()
    frame.loc[0, ["ai_dram", "flop_per_s"]] = [99.0, 13.2e12]
    data = roofline_from(frame, CEILINGS)
    gemm = next(i for i, p in enumerate(data.points) if p.label == "gemm")
    for selected in range(len(data.points)):
        bare = unlabelled(monkeypatch, data, 80, 20, selected)
        lines = plain(build_plot(data, 80, 20, selected))
        spot = next(
            (r, c)
            for r, line in enumerate(bare)
            for c, ch in enumerate(line)
            if ch in POINTS and c > 70 and r < 6
        )
        # gemm: 3rd by time
        assert lines[spot[0]][spot[1]] == ("◆" if selected == gemm else str(gemm + 1))
        assert "FP32" in "\n".join(lines)  # moved beside the point, not dropped


def test_a_high_ceiling_whose_ridge_is_far_right_keeps_its_line_visible(monkeypatch, tmp_path):
    """RTX 4090 HGEMM: the FP16-accumulate tensor ceiling (330 TFLOP/s, ridge at 330 FLOP/B on a 1
    TB/s DRAM slope) starts so far right that at 80 columns its name covered every cell of its line
    (a label, no line). The name now goes above or below; its dotted line stays drawn where it
    was."""
    from flopscope.core import read_report

    from ..helpers.raw_csv import mixed_accumulate_hgemm

    report = read_report(mixed_accumulate_hgemm(tmp_path / "hgemm.csv"))
    data = roofline_from(report.group("name"), report.ceilings())
    top = next(c for c in data.compute if c.name == "tensor_fp16_acc16")
    glyph = roofline_plot.COMPUTE_GLYPHS[
        data.compute.index(top) % len(roofline_plot.COMPUTE_GLYPHS)
    ]
    assert top.value / data.dram.value > 100  # the ridge is in the last decade of the plot
    bare = unlabelled(monkeypatch, data, 80, 18, 0)
    lines = plain(build_plot(data, 80, 18, 0))
    drawn = [r for r, line in enumerate(bare) if line.rstrip("│ ").endswith(glyph * 3)]
    assert drawn, "\n".join(bare)
    assert lines[drawn[0]].rstrip("│ ").endswith(glyph * roofline_plot.VISIBLE_LINE), "\n".join(
        lines
    )
    assert any(line.endswith(" TC FP16/ACC16│") for line in lines), "\n".join(lines)


# -- the Roofline screen's keys: the table's
# ------------------------------------------------------------------------
async def test_roofline_keys_walk_the_points_like_table_rows(monkeypatch):
    from flopscope.core import read_report
    from flopscope.tui.app.screens.roofline import RooflineScreen

    from ..conftest import fixture_path
    from ..helpers.app import make_app, ready

    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        roof = app.screen
        assert isinstance(roof, RooflineScreen)
        last = len(roof.data.kernels) - 1  # every row shown, plotted or not: the table's rows
        assert last >= 3
        steps = [
            ("down", 1),
            ("j", 2),
            ("l", 3),
            ("up", 2),
            ("k", 1),
            ("h", 0),
            ("right", 1),
            ("left", 0),
            ("end", last),
            ("home", 0),
            ("pagedown", last),
            ("pageup", 0),
            ("space", last),
        ]
        for key, expected in steps:
            await pilot.press(key)
            assert roof.selected == expected, key
            assert roof.query_one(RooflinePlot).selected == roof.data.plot_index(
                roof.data.kernels[expected]
            )


async def test_roofline_opened_on_a_lower_row_draws_that_rows_point_selected():
    """Issue 19.1: `j j r` named the third kernel while the plot's ◆ (and its L2/L1 legend) stayed
    on the first: the plot was synced only when the selection moved."""
    from flopscope.core import read_report
    from flopscope.tui.app.screens.roofline import RooflineScreen

    from ..conftest import fixture_path
    from ..helpers.app import make_app, ready

    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    # The third kernel by total time, summed here from the launches' own durations.
    third = (
        report.kernels.groupby("kernel")["duration_s"].sum().sort_values(ascending=False).index[2]
    )
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("j", "j", "r")
        await pilot.pause()
        roof = app.screen
        assert isinstance(roof, RooflineScreen)
        named = roof.data.kernels[roof.selected]
        assert named.label == third
        launches = report.kernels[report.kernels["kernel"] == third]
        assert named.ai == pytest.approx(
            launches["flop"].sum() / launches["dram_bytes"].sum(), rel=1e-6
        )
        plot = roof.query_one(RooflinePlot)
        assert plot.selected == roof.data.points.index(named)

        def diamond(text: str) -> list[tuple[int, int]]:
            return [(r, line.index("◆")) for r, line in enumerate(text.split("\n")) if "◆" in line]

        # The ◆ on screen is where this kernel's point goes, not where the first kernel's does.
        width, height = plot.size
        below = below_plot(roof.data, width, None, False)
        on_screen = diamond("\n".join(plot.render().plain.split("\n")[: height - below]))
        assert on_screen == diamond(
            build_plot(roof.data, width, height - below, plot.selected, False).plain
        )
        assert on_screen != diamond(build_plot(roof.data, width, height - below, 0, False).plain)
        levels = " ".join(entry for entry, _ in legend(roof.data, plot.selected, False))
        assert ("its L1 AI" in levels) == (not math.isnan(named.ai_l1))


def test_the_axes_stand_still_while_the_selection_walks():
    """Issue 41.6: the x axis rescaled while walking the points (the selected kernel's L1 intensity
    stretched it), so every point moved under the user's eyes. The axes now hold every point and
    ridge whichever is selected; a ▼ beyond them is not drawn (the text under the plot gives its
    value)."""
    frame = rows()
    # 10^6 FLOP/B at L1: far right of every other value
    frame.loc[frame["kernel"] == "gemm", "ai_l1"] = 1e6
    data = roofline_from(frame, CEILINGS)
    gemm = [p.label for p in data.points].index("gemm")

    def frame_and_axis(selected: int) -> list[str]:
        lines = plain(build_plot(data, 100, 20, selected, color=False))
        axis = next(r for r, line in enumerate(lines) if "┴" in line or "┬" in line)
        return [line[:6] for line in lines[:axis]] + lines[axis : axis + 2]

    shown = {tuple(frame_and_axis(i)) for i in range(len(data.points))}
    assert len(shown) == 1  # the same ticks, labels and frame for every selection
    assert (
        "1M" not in frame_and_axis(gemm)[-1]
        and "▼" not in build_plot(data, 100, 20, gemm, color=False).plain
    )


async def test_walking_the_rows_moves_neither_the_frame_nor_the_axes():
    """Issue 41.6: the plot shifted a row as the legend under it changed with the selection, and the
    x axis rescaled: walking every row of the demo, the frame and both axes' labels stay where they
    were."""
    from flopscope.tui.app.screens.roofline import RooflineScreen

    from ..helpers.app import make_app, ready, screen_lines
    from ..helpers.real_files import DEMO, report_of

    app = make_app(report_of(DEMO))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        roof = app.screen
        assert isinstance(roof, RooflineScreen)
        seen = set()
        for _ in range(len(roof.data.kernels)):
            lines = screen_lines(app)
            top = next(r for r, line in enumerate(lines) if "┌" in line)
            bottom = next(r for r, line in enumerate(lines) if "└" in line)
            seen.add(
                (top, bottom, tuple(line[:5] for line in lines[top:bottom]), lines[bottom + 1])
            )
            await pilot.press("j")
        assert len(seen) == 1, seen


def test_the_selected_marker_is_unlike_every_series():
    """Issue 41.6: the selected ◆ was bright red beside a magenta BF16 series; it is in reverse
    video now, a style no ceiling, slope or point uses."""
    data = roofline_from(rows(), CEILINGS)
    drawn = build_plot(data, 80, 20, selected=0, color=True)
    marked = [span.style for span in drawn.spans if drawn.plain[span.start : span.end] == "◆"]
    others = [span.style for span in drawn.spans if drawn.plain[span.start : span.end] != "◆"]
    assert marked and all(style.bgcolor is not None for style in marked)
    assert all(getattr(style, "bgcolor", None) is None for style in others)


def test_a_kernel_judged_at_its_own_clock_has_its_own_roof_drawn():
    """Issue 41.2: a kernel whose launches ran at a lower clock is judged against its peak at that
    clock; the roof drawn for it is that peak (≈, in its own row when far enough from the run's),
    named with its clock."""
    frame = rows()
    # gemm at 3/4 of the run's clock
    frame["peak_flop_per_s"] = [9.9e12, 3.3e12, 13.2e12, 13.2e12, np.nan, np.nan]
    frame["sm_clock_hz"] = [1.0e9, 1.33e9, 1.33e9, 1.33e9, np.nan, np.nan]
    data = roofline_from(frame, CEILINGS)
    gemm = [p.label for p in data.points].index("gemm")
    drawn = build_plot(data, 100, 30, gemm, color=False).plain
    assert "≈" in drawn
    assert (
        "≈"
        not in build_plot(
            data, 100, 30, [p.label for p in data.points].index("copy"), color=False
        ).plain
    )
    entries = [text for text, _ in legend(data, gemm, color=False)]
    assert "≈ its own roof 9.90 TFLOP/s at SM 1.00 GHz" in entries
