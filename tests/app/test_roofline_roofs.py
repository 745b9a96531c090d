"""Issue 22: the roofline draws three roofs, `c` switches between them (datasheet, theoretical at
the measured clock, measured on this node: a stored `flopscope ceilings` result for the report's
GPU), the active roof is named on the plot and every % of peak says whose peak it is. Real screens
at 80x24 under Pilot, a real H100 report (the project's capture); the stored ceilings are SYNTHETIC
(tests/helpers/ceilings.py), and the expected ratios come from them and core/data/gpus.csv, read in
the test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.store.ceilings import save
from flopscope.core.store.run_store import Store
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.roofline import RooflineScreen

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines, shown_cells, summary_text, wait_for_rows
from ..helpers.ceilings import SYNTHETIC, datasheet, synthetic

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
GEMM = H100 / "gemm_fp32_4096x4096x4096.ncu-rep.xz"  # one FP32 GEMM at ~77% of its clock roof


def peak_shown(lines: list[str]) -> tuple[float, str]:
    """The selected point's `% of FP32 peak (whose)` on the screen."""
    found = re.search(r"([\d.]+)% of FP32 peak \(([^)]*)\)", " ".join(lines))
    assert found, "\n".join(lines)
    return float(found.group(1)), found.group(2)


async def press_roof(app, pilot, title: str) -> list[str]:
    await pilot.press("c")
    await settle(pilot, lambda: any(line.startswith(title) for line in screen_lines(app)))
    return screen_lines(app)


@pytest.fixture
def gemm():
    if not GEMM.exists():
        pytest.skip(f"{GEMM} not in this checkout")
    return read_report(GEMM)


async def test_c_switches_the_roof_and_the_pct_of_peak_by_the_ratio_of_the_roofs(
    gemm, tmp_path, monkeypatch
):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    with Store() as store:
        save(store, synthetic())  # NVIDIA H100 80GB HBM3: the report's GPU
    sheet = datasheet("h100-sxm")
    # the report's own counter x clock
    clock_peak = float(gemm.kernels["report_peak_fp32_flop_per_s"].iloc[0])
    measured = 0.89 * sheet["fp32"]
    app = make_app(gemm)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        lines = screen_lines(app)
        assert any(
            line.startswith("Roof: theoretical at the measured clock · c: datasheet")
            for line in lines
        )
        at_clock = peak_shown(lines)
        lines = await press_roof(app, pilot, "Roof: datasheet · c: measured on this node")
        on_sheet = peak_shown(lines)
        assert "FP32 66.9 TFLOP/s" in " ".join(lines) and "DRAM 3.35 TB/s" in " ".join(lines)
        lines = await press_roof(app, pilot, f"Roof: {SYNTHETIC} on gpubox (")
        on_node = peak_shown(lines)
        assert "FP32 59.5 TFLOP/s" in " ".join(lines) and "DRAM 2.88 TB/s" in " ".join(lines)
        assert (at_clock[1], on_sheet[1], on_node[1]) == ("at clock", "datasheet", "measured")
        # Printed to 3 significant digits (~77-87%): ratios within 0.2%.
        assert on_node[0] / on_sheet[0] == pytest.approx(sheet["fp32"] / measured, rel=2e-3)
        assert at_clock[0] / on_node[0] == pytest.approx(measured / clock_peak, rel=2e-3)
        # the kernel screen of the point: judged by the roof chosen, and says so
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        shown = [" ".join(line.split()) for line in screen_lines(app)]
        assert any(f"% of peak {on_node[0]:.1f}% (measured)" in line for line in shown), shown
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        # the Kernels table follows the roof chosen, and its header names it
        await pilot.press("escape")
        await ready(app, pilot)
        table = shown_cells(await wait_for_rows(pilot, app.kernels))
        # compute bounds the GEMM: the table's %Roof is its %Peak
        assert table[0]["roof"] == "compute"
        assert table[0]["pct_of_roof"] == f"{on_node[0]:.1f}%"
        assert f"from {SYNTHETIC} on gpubox (" in re.sub(r"\s+", " ", summary_text(app))
        assert any(
            "judged against the measured on this node roof" in line
            for line in screen_lines(app)[-3:]
        )
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        lines = await press_roof(app, pilot, "Roof: theoretical at the measured clock")
        assert peak_shown(lines) == at_clock


async def test_without_stored_ceilings_the_key_says_why_there_is_no_measured_roof(
    gemm, tmp_path, monkeypatch
):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    with Store() as store:
        # another GPU's only
        save(store, synthetic(gpu="NVIDIA A100-SXM4-80GB", key="a100-sxm4-80gb"))
    app = make_app(gemm)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        await press_roof(app, pilot, "Roof: datasheet · c: measured on this node")
        lines = await press_roof(
            app, pilot, "Roof: theoretical at the measured clock · c: datasheet"
        )
        await settle(pilot, lambda: app.screen.query("Toast"))
        lines = screen_lines(app)
        text = re.sub(r"\s+", " ", " ".join(line.strip(" ▌") for line in lines))
        assert (
            "No measured roof: no ceilings measured for NVIDIA H100 80GB HBM3 are stored;"
            " `flopscope ceilings" in text
        ), "\n".join(lines)
        assert "on a node with NVIDIA H100 80GB HBM3 measures them" in text
