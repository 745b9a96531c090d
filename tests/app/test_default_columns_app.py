"""Issue 41.4 in the app: the Kernels screen judges rows by %Roof, shows ncu's SM% and Mem% for a
report without FLOP or byte counters, and its header names the run-level figures for what they
are."""

from __future__ import annotations

from pathlib import Path

import ncu_report
import pytest
from flopscope.core import read_report
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.real_files import DEMO


def _header(app, table: KernelTable) -> list[str]:
    return screen_lines(app)[table.region.y].split()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_kernels_screen_shows_percent_of_roof_not_peak(size):
    app = make_app(read_report(Path(DEMO)))
    async with app.run_test(size=size) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        titles = _header(app, table)
        assert "%Roof" in titles and "Bound" in titles and "%Peak" not in titles, titles
        text = "\n".join(screen_lines(app))
        assert "FLOP %Peak" in text and "arith. time" in text and "DRAM %Peak" in text
        assert "FLOPS eff" not in text and "compute eff" not in text


async def test_a_basic_report_shows_ncus_speed_of_light_in_the_app():
    """A `--set basic` report of one kernel: the row's SM% and Mem% are its launches' time-weighted
    means, as ncu_report reads them."""
    path = fixture_path("a10_spyinfer_linear_105k_basic.ncu-rep")
    ctx = ncu_report.load_report(str(path))
    time = sm = memory = 0.0
    for r in range(ctx.num_ranges()):
        for i in range(ctx.range_by_idx(r).num_actions()):
            action = ctx.range_by_idx(r).action_by_idx(i)
            t = action.metric_by_name("gpu__time_duration.sum").value()
            time += t
            sm += (
                t
                * action.metric_by_name("sm__throughput.avg.pct_of_peak_sustained_elapsed").value()
            )
            memory += (
                t
                * action.metric_by_name(
                    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
                ).value()
            )
    app = make_app(read_report(path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        titles = _header(app, table)
        assert "SM%" in titles and "Mem%" in titles, titles
        # its name is cut at 80 columns: the FLOP/s column, blank on every row, gives it its room
        assert "FLOP/s" not in titles and "Bound" not in titles, titles
        row = screen_lines(app)[table.region.y + 1].split()
        assert f"{sm / time:.1f}%" in row and f"{memory / time:.1f}%" in row, row
