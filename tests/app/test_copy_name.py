"""`y` copies the selected kernel's full name (not the shortened one the table shows) to the
clipboard, from the Kernels table and from a kernel's screen: Textual sends it to the terminal as
OSC 52, so it reaches the clipboard of the machine one's SSH session runs on."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready


async def test_y_copies_the_selected_kernels_full_name():
    report = read_report(fixture_path(H100))
    # the table's rows, in its first order (time)
    names = report.group("name")["kernel_full"].tolist()
    wanted = names[4]
    assert len(wanted) > 80  # a CUB template name: the table shows it shortened
    app = make_app(report)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("j", "j", "j", "j")
        assert screen.query_one(KernelTable).cursor_row == 4
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == wanted
        assert any(n.message.startswith("Copied: ") for n in app._notifications)
        app.copy_to_clipboard("")
        await pilot.press("k", "enter")  # the kernel's own screen copies its name too
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == names[3]
