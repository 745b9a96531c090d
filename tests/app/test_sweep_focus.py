"""Issue 19.7: tab moves focus to the sweep's findings (they scroll there when they do not fit), and
where the focus is shows with NO_COLOR too: a bar at the findings' left edge, not only a background
tint."""

from __future__ import annotations

from flopscope.core.analysis.scaling import Slice
from flopscope.tui.app.launch import sweep_app

from ..conftest import settle
from ..helpers.app import screen_lines
from ..helpers.sweep_reports import shuffled


async def test_focused_findings_show_a_bar_at_their_left_edge(reports):
    app = sweep_app([Slice("batch_size", {}, shuffled(reports))], "sweep")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: app.screen.query("#sweep-table"))
        header = app.screen.query_one("#sweep-header")
        rows = range(header.region.y, header.region.bottom)
        before = [screen_lines(app)[r] for r in rows]
        assert not any(line.startswith("▌") for line in before)
        await pilot.press("tab")
        await settle(pilot, lambda: app.screen.focused is header)
        after = [screen_lines(app)[r] for r in rows]
        assert all(line.startswith("▌") for line in after), after
        # the same words, not reflowed
        assert [a[1:].strip() for a in after] == [b.strip() for b in before]


async def test_focused_findings_scroll_with_j_k_g_G_as_every_list_does(reports):
    """Issue 43.4: the findings scrolled with the arrows only."""
    app = sweep_app([Slice("batch_size", {}, shuffled(reports))], "sweep")
    async with app.run_test(size=(80, 16)) as pilot:  # short: the findings do not all fit
        await settle(pilot, lambda: app.screen.query("#sweep-table"))
        header = app.screen.query_one("#sweep-header")
        await pilot.press("tab")
        await settle(pilot, lambda: app.screen.focused is header)
        assert header.max_scroll_y > 0, "the findings fit: this test says nothing"
        await pilot.press("j")
        assert header.scroll_y == 1
        await pilot.press("G")
        assert header.scroll_y == header.max_scroll_y
        await pilot.press("k")
        assert header.scroll_y == header.max_scroll_y - 1
        await pilot.press("g")
        assert header.scroll_y == 0
