"""The Diff screen of `diff --by module`: the two transformer steps (batch 8 and 32, H100) node by
node, `enter` on a node both ran shows A's and B's roll-up side by side. Expected figures from each
report's launches."""

from __future__ import annotations

import pytest
from flopscope.core.analysis.diff import diff_runs
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.kernel_pair import KernelPairScreen

from ..conftest import settle
from ..helpers.app import screen_lines, wait_for_rows
from ..helpers.modules import module_launches
from ..helpers.real_files import H100, report_of


async def test_enter_on_a_module_node_shows_each_runs_roll_up():
    a, b = (report_of(H100 / f"train_transformer_bf16_bs{n}.ncu-rep.xz") for n in (8, 32))
    app = FlopscopeApp(DiffScreen(diff_runs(a, b, by="module"), "bs8", "bs32", reports=(a, b)))
    async with app.run_test(size=(120, 40)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        assert any(line.lstrip().startswith("Module") for line in screen_lines(app))
        table.cursor_row = next(
            i for i in range(len(table.model)) if table.model.row(i)["kernel"].endswith("/mlp")
        )
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelPairScreen))
        for row, run in zip(app.screen.rows, (a, b), strict=True):
            mine = module_launches(run.kernels, "mlp")
            assert row["count"] == mine.sum()
            assert row["duration_s"] == pytest.approx(
                run.kernels.loc[mine, "duration_s"].sum(), rel=1e-9
            )
