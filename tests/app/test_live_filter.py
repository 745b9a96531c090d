"""The table filter is live (issue 43.1): the rows follow the text as it is typed, without Enter; an
expression's problem shows under it at once with its position; escape puts back the filter before;
`up`/`down` recall the filters given. Expected rows come from plain pandas comparisons on the
engine's table."""

from __future__ import annotations

from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.widgets import Input

from ..conftest import settle
from ..helpers.app import make_app, ready

pytestmark = pytest.mark.slow


async def _type(pilot, text: str) -> None:
    await pilot.press(*("space" if c == " " else c for c in text))


async def test_rows_follow_the_expression_as_it_is_typed(demo):
    rows = demo.group("name")
    over_20us, over_2us = (
        int((rows["duration_s"] > 20e-6).sum()),
        int((rows["duration_s"] > 2e-6).sum()),
    )
    assert 0 < over_20us < over_2us
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash")
        await _type(pilot, "time > 20us")
        await settle(pilot, lambda: len(screen.model) == over_20us)
        assert isinstance(app.screen, PromptScreen)  # no Enter: the prompt is still open
        assert screen.query_state.where == "time > 20us"
        # `time > 2`: two seconds, no kernel that long
        await pilot.press("backspace", "backspace", "backspace")
        await settle(pilot, lambda: len(screen.model) == 0)
        await _type(pilot, "us")
        await settle(pilot, lambda: len(screen.model) == over_2us)
        shown = screen.model.shown()
        assert (shown["duration_s"] > 2e-6).all()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and len(screen.model) == over_2us
        status = str(screen.query_one("#status").render())
        assert f"{over_2us}/{len(rows)}" in status and "filter time > 2us" in status


async def test_plain_text_still_matches_names_live(demo):
    rows = demo.group("name")
    nvjet = int(rows["kernel_full"].str.contains("nvjet", case=False).sum())
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash")
        await _type(pilot, "NVJET")
        await settle(pilot, lambda: len(screen.model) == nvjet)
        assert 0 < nvjet < len(rows) and screen.query_state.pattern == "NVJET"


async def test_a_bad_expression_shows_its_problem_inline_and_escape_puts_back_the_filter(demo):
    rows = demo.group("name")
    dram = int((rows["roof"].astype(object) == "dram").sum())
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash")
        await _type(pilot, "bound == dram")
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is screen)
        assert len(screen.model) == dram
        await pilot.press("slash")
        prompt = app.screen
        assert isinstance(prompt, PromptScreen)
        prompt.query_one(Input).value = ""
        await _type(pilot, "tme > 5us")
        await settle(pilot, lambda: bool(prompt.error))
        assert (
            "no column 'tme' at character 1" in prompt.error
            and "did you mean time?" in prompt.error
        )
        error = str(prompt.query_one("#prompt-error").render())
        assert "no column 'tme'" in error
        # the rows are the last filter that could be applied on the way: `tme`, a name pattern then
        assert len(screen.model) == int(rows["kernel_full"].str.contains("tme", case=False).sum())
        await pilot.press("enter")  # refused: the dialog stays with the reason
        assert app.screen is prompt
        await pilot.press("escape")
        await pilot.pause()
        assert (
            app.screen is screen
            and screen.query_state.where == "bound == dram"
            and len(screen.model) == dram
        )


async def test_up_and_down_recall_the_filters_given(demo):
    rows = demo.group("name")
    counts = {
        "time > 20us": int((rows["duration_s"] > 20e-6).sum()),
        "prec ~ tc": int(rows["precision"].astype(str).str.contains("tensor_").sum()),
    }
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        for text in counts:
            await pilot.press("slash")
            app.screen.query_one(Input).value = ""
            await _type(pilot, text)
            await pilot.press("enter")
            await settle(pilot, lambda: app.screen is screen)
        await pilot.press("escape")  # clears the filter
        assert len(screen.model) == len(rows)
        await pilot.press("slash")
        answer = app.screen.query_one(Input)
        await _type(pilot, "draft")
        await pilot.press("up")
        assert answer.value == "prec ~ tc"
        # recalled: applied, live
        await settle(pilot, lambda: len(screen.model) == counts["prec ~ tc"])
        await pilot.press("up")
        assert answer.value == "time > 20us"
        await settle(pilot, lambda: len(screen.model) == counts["time > 20us"])
        await pilot.press("up")  # the oldest stays
        assert answer.value == "time > 20us"
        await pilot.press("down", "down")
        assert answer.value == "draft"  # back to the text being typed
        assert len(screen.query_one(KernelTable).model) == len(screen.model)


async def test_the_diff_table_filters_by_expression_over_its_own_columns():
    """The Runs, Diff and Reconcile screens share TableScreen: the same live expressions, over their
    columns (here the Diff's `ΔTime` by title and `count_b` by key)."""
    from flopscope.core.analysis.diff import diff_runs
    from flopscope.tui.app.app import FlopscopeApp
    from flopscope.tui.app.screens.diff import DiffScreen

    h100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
    a, b = (read_report(h100 / f"train_transformer_bf16_bs{n}.ncu-rep.xz") for n in (8, 32))
    rows = diff_runs(a, b)
    slower = rows["duration_s_delta"] > 10e-6
    expected = int((slower & (rows["count_b"] >= 2)).sum())
    assert 0 < expected < len(rows)
    app = FlopscopeApp(DiffScreen(rows, "bs8", "bs32", (a.meta.gpu, b.meta.gpu)))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await settle(pilot, lambda: screen.model is not None)
        await pilot.press("slash")
        await _type(pilot, "ΔTime > 10us and count_b >= 2")
        await settle(pilot, lambda: len(screen.model) == expected)
        kept = screen.model.shown()
        assert (kept["duration_s_delta"] > 10e-6).all() and (kept["count_b"] >= 2).all()
