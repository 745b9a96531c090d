"""The roofline plot: log10 taken by us, plotext on linear axes, stable across repaints and resizes."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import plotext as plt
import pytest
from flopscope.core.metrics import Ceiling
from flopscope.tui.widgets.roofline_plot import (
    Point,
    Roofline,
    RooflinePlot,
    build_plot,
    decade_label,
    legend,
    roofline_from,
)
from rich.cells import cell_len
from textual.app import App, ComposeResult

CEILINGS = [Ceiling("fp32", 13.2e12, "report"), Ceiling("fp64", 6.6e12, "report"), Ceiling("dram", 900e9, "report")]


def rows() -> pd.DataFrame:
    """Four plottable kernels and two that are not (no FLOPs; unknown bytes)."""
    return pd.DataFrame({
        "kernel": ["gemm", "stencil", "copy", "reduce", "memset", "unknown"],
        "ai_dram": [80.0, 2.0, 0.05, 0.5, 0.0, np.nan],
        "flop_per_s": [9e12, 1e12, 4e10, 3e11, 0.0, 1e9],
        "pct_time": [10.0, 50.0, 5.0, 30.0, 4.0, 1.0],
        "precision": ["fp32", "fp64", "fp32", "fp32", "", "fp32"],
        "pct_of_peak": [68.0, 15.0, 0.3, 2.0, 0.0, np.nan],
        "bound": ["compute", "memory", "memory", "memory", "", ""],
        "ai_l2": [20.0, 1.0, np.nan, 0.2, np.nan, np.nan],
        "ai_l1": [10.0, np.nan, np.nan, 0.1, np.nan, np.nan],
    })


def plain(text: str) -> list[str]:
    return plt.uncolorize(text).rstrip("\n").split("\n")


def test_points_are_finite_positive_and_ordered_by_time_share():
    data = roofline_from(rows(), CEILINGS)
    assert [p.label for p in data.points] == ["stencil", "reduce", "gemm", "copy"]
    assert data.dropped == 2 and data.unknown == 1  # memset did no FLOPs; "unknown" lacks its bytes
    assert [c.name for c in data.compute] == ["fp32", "fp64"] and data.dram.value == 900e9


def test_nothing_to_plot_says_why_per_row_kind():
    """Rows with no FLOPs have no place on a log-log plot: they are not sent to collect counters they have."""
    from flopscope.tui.screens.roofline import describe

    no_work = roofline_from(rows().iloc[[4]], CEILINGS)
    assert str(describe(no_work, None)) == "No point to plot: 1 row(s) did no FLOPs or moved no DRAM bytes."
    both = str(describe(roofline_from(rows().iloc[[4, 5]], CEILINGS), None))
    assert "1 row(s) did no FLOPs" in both and "1 row(s) lack counted FLOPs or DRAM bytes" in both
    assert "ncu --metrics" in both


def test_order_and_limit_select_rows():
    data = roofline_from(rows(), CEILINGS, order=np.array([0, 2, 4]), limit=1)
    assert [p.label for p in data.points] == ["gemm"] and data.beyond == 1 and data.dropped == 1


def test_decade_labels():
    assert [decade_label(k) for k in (-2, -1, 0, 1, 2, 3, 4, 9, 12, 13)] == \
        ["0.01", "0.1", "1", "10", "100", "1k", "10k", "1G", "1T", "10T"]


@pytest.mark.parametrize("color", [True, False])
def test_repeated_builds_and_resizes_give_identical_output(color):
    data = roofline_from(rows(), CEILINGS)
    first = build_plot(data, 80, 20, selected=0, color=color)
    assert build_plot(data, 80, 20, selected=0, color=color) == first  # a second build changes nothing
    other = roofline_from(rows().iloc[:2], CEILINGS[:1])
    build_plot(other, 50, 12, selected=1, color=color)  # another plot in between must not leak into this one
    build_plot(data, 60, 12, selected=2, color=color)
    assert build_plot(data, 80, 20, selected=0, color=color) == first
    lines = plain(first)
    assert len(lines) == 20 and all(cell_len(line) == 80 for line in lines)


def test_axes_ticks_and_labels():
    lines = plain(build_plot(roofline_from(rows(), CEILINGS), 90, 24, selected=1))  # "reduce": L2 and L1 AI
    text = "\n".join(lines)
    for tick in ("0.01", "0.1", "1", "10", "100", "10G", "100G", "1T", "10T"):
        assert re.search(rf"(^|\s){re.escape(tick)}(┤|\s|$)", text), tick
    assert "arithmetic intensity, FLOP/byte (DRAM)" in text and "FLOP/s" in text
    assert "DRAM" in text and "FP32" in text and "ridge" in text
    assert "◆" in text and "•" in text and "▲" in text and "▼" in text  # selected, others, L2 and L1 AI


def test_colours_are_256_palette_and_none_without_colour():
    data = roofline_from(rows(), CEILINGS)
    coloured = build_plot(data, 80, 20, selected=0, color=True)
    assert "\x1b[38;5;" in coloured and "\x1b[38;2;" not in coloured  # legible without truecolor
    assert "\x1b[38;" not in build_plot(data, 80, 20, selected=0, color=False)


def test_legend_names_every_ceiling_and_marker():
    labels = [text for text, _ in legend(roofline_from(rows(), CEILINGS), selected=0)]
    assert labels[:3] == ["━ DRAM 900 GB/s", "━ FP32 13.2 TFLOP/s", "─ FP64 6.60 TFLOP/s"]
    assert "◆ selected" in labels and "▲ selected at L2 AI" in labels


def test_no_points_and_no_ceilings_still_draw():
    empty = Roofline(points=(), compute=(), dram=None, dropped=3)
    assert len(plain(build_plot(empty, 60, 14))) == 14
    lone = Roofline(points=(Point("k", 1.0, 1e9, 100.0, 0),), compute=(), dram=None)
    assert "◆" in build_plot(lone, 60, 14, selected=0)


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
            assert len(lines) <= plot.size.height and all(cell_len(line) <= plot.size.width for line in lines)
        assert plot.render().plain == first
        plot.select(2)
        assert plot.render().plain != first and math.isfinite(plot.data.points[2].ai)
