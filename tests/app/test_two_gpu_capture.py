"""The app on a real capture whose launches ran on two GPUs: `enter` on every group opens that GPU's
launches (it killed the app with a read-only array, issue 38), and the roofline walks both GPUs."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.widgets.roofline_plot import RooflinePlot

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.two_gpu_capture import OTHER, two_gpu_page


async def test_enter_on_each_group_opens_its_gpus_launches_and_g_walks_the_gpus(tmp_path):
    report = read_report(two_gpu_page(tmp_path))
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        shown = screen.model.shown()
        assert set(shown["gpu"]) == set(report.kernels["gpu"]) and OTHER in set(shown["gpu"])
        for i in range(6):  # every group: tests/cli/test_two_gpu_capture.py
            screen.query_one("KernelTable").cursor_row = i
            await pilot.press("enter")
            await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
            text = " ".join(" ".join(screen_lines(app)).split())
            assert f"Launches {shown.iloc[i]['count']}" in text, text
            await pilot.press("escape")
            await settle(pilot, lambda: app.screen is screen)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        seen = {app.screen.query_one(RooflinePlot).data.dram.gpu}
        await pilot.press("g")
        await pilot.pause()
        seen.add(app.screen.query_one(RooflinePlot).data.dram.gpu)
        assert seen == set(report.kernels["gpu"])
