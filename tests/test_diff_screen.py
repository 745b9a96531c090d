"""The diff of two runs in the app: one row per kernel group, largest time change first; export writes them."""

from __future__ import annotations

import pandas as pd
import pytest
from flopscope.core import read_report
from flopscope.core.diff import diff_runs
from flopscope.tui.screen_app import ScreenApp
from flopscope.tui.screens.diff import DiffScreen
from flopscope.tui.screens.help import HelpScreen
from flopscope.tui.screens.prompt import PromptScreen
from textual.widgets import DataTable, Input

from .conftest import fixture_path


@pytest.fixture
def rows() -> pd.DataFrame:
    a = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    b = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"))
    return diff_runs(a, b)


async def test_rows_keys_and_export(tmp_path, rows):
    app = ScreenApp(DiffScreen(rows, "h100", "mw"))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(rows)
        first = [str(c) for c in table.get_row_at(0)]
        assert first[0] == str(rows["kernel"].iloc[0]) and first[-1] == rows["presence"].iloc[0]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("e")
        assert isinstance(app.screen, PromptScreen)
        out = tmp_path / "diff.csv"
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        for _ in range(100):
            if out.exists():
                break
            await pilot.pause(0.05)
        written = pd.read_csv(out)
        assert written["duration_s_delta"].tolist() == pytest.approx(rows["duration_s_delta"].tolist())
        await pilot.press("q")
