"""The details pane's sections are rendered once per frame (RenderedOnce), and what that draws is
what rich draws from the same content at every width, in any order of widths."""

from __future__ import annotations

import io

import pytest
from flopscope.core import read_report
from flopscope.tui.app.widgets.kernel_details import KernelDetails
from flopscope.tui.app.widgets.rendered_once import RenderedOnce
from flopscope.tui.presentation.kernel_sections import section_table, sections
from rich.console import Console, Group
from rich.segment import Segment
from rich.text import Text

from ..conftest import fixture_path
from ..helpers.app import H100, make_app, ready


def details_content(row, launches) -> Group:
    """The details of `row` as KernelDetails lays them out, without the wrapper."""
    parts: list = [Text("name", style="bold", no_wrap=True, overflow="ellipsis"), Text()]
    for title, items in sections(row, launches):
        parts += [section_table(title, items), Text()]
    return Group(*parts)


def lines(console: Console, renderable, width: int) -> list[list[Segment]]:
    return console.render_lines(renderable, console.options.update_width(width), pad=False)


def test_what_it_draws_is_richs_drawing_at_each_width_in_any_order():
    report = read_report(fixture_path(H100))
    rows = report.group("name")
    console = Console(file=io.StringIO(), color_system="truecolor", width=200)
    for i in range(len(rows)):
        once = RenderedOnce(details_content(rows.iloc[i], report.kernels))
        # narrow widths fold the full kernel name onto more lines: a width-blind cache would differ
        for width in (30, 47, 90, 30, 47):
            expected = lines(console, details_content(rows.iloc[i], report.kernels), width)
            assert lines(console, once, width) == expected, (i, width)


class Counted:
    """A renderable that counts how often rich draws it."""

    def __init__(self, renderable) -> None:
        self.renderable, self.drawn = renderable, 0

    def __rich_console__(self, console, options):
        self.drawn += 1
        yield self.renderable


@pytest.mark.parametrize("wrapped", [True, False])
async def test_a_details_frame_draws_the_sections_once(wrapped, monkeypatch):
    """Textual lays a Static's rich content out (its height) and draws it from separate renderings;
    the details pane's from one. Without the wrapper (wrapped=False) the count is Textual's own."""
    report = read_report(fixture_path(H100))
    counted: list[Counted] = []

    def wrap(content):
        counted.append(Counted(content))
        return RenderedOnce(counted[-1]) if wrapped else counted[-1]

    monkeypatch.setattr("flopscope.tui.app.widgets.kernel_details.RenderedOnce", wrap)
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("j")
        await pilot.pause(0.2)
        assert app.screen.query_one(KernelDetails).display
        shown = counted[-1]
        # Textual alone: once for the height, once to draw, and once more as the pane is refreshed
        assert shown.drawn == 1 if wrapped else shown.drawn > 1
