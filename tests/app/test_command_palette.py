"""Issue 43.3: a command palette (`:` and ctrl+p, Textual's own): every action of the screen,
fuzzy-matched, with its key; running one does what its key does."""

from __future__ import annotations

from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from textual.command import CommandPalette

from ..conftest import settle
from ..helpers.app import make_app, ready
from ..helpers.real_files import DEMO, report_of


async def test_colon_opens_the_palette_and_a_typed_command_runs_its_action():
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("colon")
        await settle(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"roofl")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        await pilot.press("ctrl+p")
        await settle(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"open")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))


async def test_the_palette_lists_every_key_of_the_screen_with_the_key():
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        titles = [command.title for command in app.get_system_commands(screen)]
        shown = [b.binding for b in screen.active_bindings.values() if b.binding.show and b.enabled]
        for binding in shown:
            key = app.get_key_display(binding)
            listed = [t for t in titles if t.startswith(f"{binding.description} (")]
            assert listed and key in listed[0], (binding.description, titles)
        # Textual's own
        assert any(title.startswith("Theme") or "theme" in title.lower() for title in titles)
