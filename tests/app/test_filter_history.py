"""The filters given are kept across restarts (issue 43): `up` in a new app's filter prompt recalls
the last app's, from filter_history.json in flopscope's home; the file is read as untrusted (no
control characters, no non-strings, no giant entries) and bounded; a damaged file is no history, not
a refusal to start."""

from __future__ import annotations

import json

import pytest
from flopscope.tui.app.filter_history import MAX_ENTRIES
from flopscope.tui.app.screens.prompt import PromptScreen
from textual.widgets import Input

from ..conftest import settle
from ..helpers.app import opened_app, ready

pytestmark = pytest.mark.slow


async def _give(app, pilot, screen, text: str) -> None:
    await pilot.press("slash")
    await settle(pilot, lambda: isinstance(app.screen, PromptScreen))
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot, lambda: app.screen is screen)


async def _recalled(app, pilot, presses: int) -> str:
    """The prompt's text after `up` pressed `presses` times in a new prompt."""
    await pilot.press("slash")
    await settle(pilot, lambda: isinstance(app.screen, PromptScreen))
    for _ in range(presses):
        await pilot.press("up")
    return app.screen.query_one(Input).value


async def test_a_restarted_app_recalls_the_filters_given_before(demo, home):
    rows = demo.group("name")
    over_20us = int((rows["duration_s"] > 20e-6).sum())
    app = opened_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        await _give(app, pilot, screen, "nvjet")
        await _give(app, pilot, screen, "time > 20us")
    assert json.loads((home / "filter_history.json").read_text()) == ["nvjet", "time > 20us"]

    again = opened_app(demo)  # a new process's app: nothing of the first but the file
    async with again.run_test(size=(100, 30)) as pilot:
        screen = await ready(again, pilot)
        assert await _recalled(again, pilot, 1) == "time > 20us"
        await settle(pilot, lambda: len(screen.model) == over_20us)  # recalled: applied, live
        await pilot.press("up")
        assert again.screen.query_one(Input).value == "nvjet"


async def test_the_file_is_untrusted_and_bounded(demo, home):
    typed = [f"time > {n}us" for n in range(MAX_ENTRIES + 20)]
    hostile = ["\x1b]52;c;cm0gLXJmIH4=\x07", "ok\x1b[2J", 7, None, "x" * 5000, "  ", "\u009b31m"]
    (home / "filter_history.json").write_text(json.dumps([*typed[:10], *hostile, *typed[10:]]))
    app = opened_app(demo)
    # strings only, no control character, the newest 50
    assert app.recent_filters == typed[-MAX_ENTRIES:]
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        assert await _recalled(app, pilot, 1) == typed[-1]
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is screen)
        await _give(app, pilot, screen, "gemm")
    kept = json.loads((home / "filter_history.json").read_text())
    assert len(kept) == MAX_ENTRIES and kept[-1] == "gemm" and kept[0] == typed[-MAX_ENTRIES + 1]


async def test_a_damaged_file_is_no_history_and_the_next_filter_rewrites_it(demo, home):
    (home / "filter_history.json").write_bytes(b"\xff\xfe not json [")
    app = opened_app(demo)
    assert app.recent_filters == []
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        await _give(app, pilot, screen, "bound == dram")
    assert json.loads((home / "filter_history.json").read_text()) == ["bound == dram"]
