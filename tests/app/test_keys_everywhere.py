"""Issue 43.4: keys that read alike everywhere: the sort picker moves with j/k and g/G like every list, and `q`
quits from the help and the sort picker as help says it does everywhere (a modal held the app's `q` back)."""

from __future__ import annotations

from flopscope.tui.app.screens.help import HelpScreen
from flopscope.tui.app.screens.sort import SortScreen
from textual.widgets import OptionList

from ..conftest import settle
from ..helpers.app import exited, make_app, ready
from ..helpers.real_files import DEMO, report_of


async def test_the_sort_picker_moves_with_j_k_g_G():
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("o")
        await settle(pilot, lambda: isinstance(app.screen, SortScreen))
        choices = app.screen.query_one("#choices", OptionList)
        start = choices.highlighted or 0
        await pilot.press("j", "j")
        assert choices.highlighted == start + 2
        await pilot.press("k")
        assert choices.highlighted == start + 1
        await pilot.press("G")
        assert choices.highlighted == choices.option_count - 1
        await pilot.press("g")
        assert choices.highlighted == 0


async def test_q_quits_from_the_help_and_the_sort_picker():
    for opener, dialog in (("question_mark", HelpScreen), ("o", SortScreen)):
        app = make_app(report_of(DEMO))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)
            await pilot.press(opener)
            await settle(pilot, lambda a=app, d=dialog: isinstance(a.screen, d))
            await pilot.press("q")
            assert await exited(app, pilot) is not None or not app.is_running, dialog
