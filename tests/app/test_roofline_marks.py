"""Issue 19.8: roofline points tell precision and time share apart. The kernels of the largest time
shares are drawn as their rank (1 = most time) and named in the legend with precision and share; the
others get a glyph per precision (so NO_COLOR still tells fp64 from fp32) in the colour of their
precision's compute ceiling."""

from __future__ import annotations

import numpy as np
import pandas as pd
from flopscope.core import read_report
from flopscope.core.table.roofline import Ceiling
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.widgets import roofline_plot
from flopscope.tui.app.widgets.roofline_plot import build_plot, legend, roofline_from
from rich.style import Style

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, screen_lines

CEILINGS = [
    Ceiling("fp32", 13.2e12, "report"),
    Ceiling("fp64", 6.6e12, "report"),
    Ceiling("dram", 900e9, "report"),
]


def eight_kernels() -> pd.DataFrame:
    """Eight kernels far apart on the plot: the five of most time ranked, three others, fp64 and
    fp32."""
    return pd.DataFrame(
        {
            "kernel": [f"k{i}" for i in range(8)],
            "ai_dram": [0.02, 0.2, 2.0, 20.0, 200.0, 0.05, 5.0, 500.0],
            "flop_per_s": [1e10, 1e11, 1e12, 5e12, 6e12, 3e10, 3e12, 5e11],
            "pct_time": [30.0, 20.0, 15.0, 12.0, 10.0, 6.0, 4.0, 3.0],
            "precision": ["fp32", "fp32", "fp64", "fp32", "fp64", "fp64", "fp32", "fp64+fp32"],
        }
    )


def test_ranks_for_the_top_kernels_and_a_glyph_per_precision_for_the_rest(monkeypatch):
    data = roofline_from(eight_kernels(), CEILINGS)
    # the ceilings' names hold digits too
    monkeypatch.setattr(roofline_plot, "_label", lambda *a: None)
    lines = build_plot(data, 100, 30, selected=None, color=False).plain.split("\n")
    inside = "\n".join(line[5:-1] for line in lines[1:-3])  # the plot area: no tick labels
    for rank in "12345":
        assert inside.count(rank) == 1, rank
    # k5 (fp64), k6 (fp32), k7 (fp64+fp32: drawn as fp64) are not ranked
    assert inside.count("○") == 2 and inside.count("•") == 1
    labels = [text for text, _ in legend(data, None)]
    ranked = ["1 k0 fp32 30%", "2 k1 fp32 20%", "3 k2 fp64 15%", "4 k3 fp32 12%", "5 k4 fp64 10%"]
    # in time order
    assert [t for t in labels if t[0] in "12345•○"] == [*ranked, "○ fp64", "• fp32"]


def test_a_point_has_its_precisions_ceiling_colour():
    data = roofline_from(eight_kernels(), CEILINGS)
    drawn = build_plot(data, 100, 30, selected=None, color=True)
    tint = {c.name: roofline_plot.COMPUTE_COLORS[i] for i, c in enumerate(data.compute)}
    for glyph, precision in (("○", "fp64"), ("•", "fp32")):
        at = drawn.plain.index(glyph)
        styles = [
            s.style for s in drawn.spans if s.start <= at < s.end and isinstance(s.style, Style)
        ]
        assert any(s.color and s.color.number == tint[precision] for s in styles), (glyph, styles)


async def test_the_roofline_screen_names_the_top_kernels_at_80x24():
    report = read_report(fixture_path(H100))
    rows = report.group("name")
    top = rows.sort_values("pct_time", ascending=False, kind="stable")
    top = top[
        np.isfinite(top["ai_dram"].astype(float))
        & (top["ai_dram"].astype(float) > 0)
        & (top["flop_per_s"].astype(float) > 0)
    ]
    first, second = str(top["kernel"].iloc[0]), str(top["kernel"].iloc[1])
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        await pilot.pause(0.1)
        text = "\n".join(screen_lines(app))
        assert f"1 {first[:17]}" in text and f"2 {second[:17]}" in text
        assert f"{float(top['pct_time'].iloc[0]):.0f}%" in text
