"""`g` to a grouping the app has computed already (warm_groupings) shows it in the key's own frame:
no loading cover, no worker; the rows are the core's grouping all the same, and a worker's older
grouping arriving later does not replace it."""

from __future__ import annotations

import numpy as np
from flopscope.core import Report, read_report
from flopscope.core.common.nvtx_stack import encode_stack
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.widgets import Static

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready


def two_ranges() -> Report:
    """The H100 report, its first half of launches in NVTX range `setup`, the rest in `solve`."""
    report = read_report(fixture_path(H100))
    kernels = report.kernels.copy()
    kernels["nvtx"] = np.where(np.arange(len(kernels)) < len(kernels) // 2, "setup", "solve")
    kernels["nvtx_stack"] = [encode_stack([("", [name])]) for name in kernels["nvtx"]]
    return Report(meta=report.meta, kernels=kernels, gpu=report.gpu, missing=report.missing)


def shown_keys(screen, key: str) -> list:
    return screen.model.shown()[key].tolist()


async def test_a_grouping_computed_already_is_shown_at_once_and_is_the_cores():
    report = two_ranges()
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await settle(
            pilot, lambda: all(app.grouped_already(by) is not None for by in ("launch", "nvtx"))
        )
        status = screen.query_one("#status", Static)
        said: list[str] = []
        update = status.update
        status.update = lambda content="", **kw: (said.append(str(content)), update(content, **kw))
        table = screen.query_one(KernelTable)
        for by, key in (("launch", "launch_id"), ("nvtx", "nvtx")):
            await pilot.press("g")
            assert screen.by == by and not table.loading
            # the core's grouping, in its time order (Report.group sorts; the screen sorts its own)
            assert shown_keys(screen, key) == report.group(by)[key].tolist()
        assert not [s for s in said if s.startswith("grouping by")], said  # never the cover


async def test_an_older_grouping_from_a_worker_does_not_replace_one_shown_at_once():
    report = two_ranges()
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await settle(pilot, lambda: app.grouped_already("nvtx") is not None)
        screen._regroup("launch")  # a worker's grouping (computed or not, it goes through one)
        screen.regroup("nvtx")  # computed already: shown now, the worker cancelled
        await pilot.pause(0.3)
        await settle(pilot, lambda: not screen.query_one(KernelTable).loading)
        assert screen.by == "nvtx"
        assert shown_keys(screen, "nvtx") == report.group("nvtx")["nvtx"].tolist()
