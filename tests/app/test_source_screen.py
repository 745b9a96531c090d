"""Issue 42.4: the Kernel screen's `v`: one launch's SASS lines, the cursor on the hottest, `n` the
next."""

from __future__ import annotations

import pytest
from flopscope.core import read_report

from ..conftest import fixture_path
from ..helpers.accounting import report_actions, samples_by_address

CUB = "h100pcie_ee384_cub_agents_full.ncu-rep"


async def test_v_on_the_kernel_screen_opens_the_launchs_sass_on_its_hottest_line():
    from flopscope.tui.app.screens.kernel import KernelScreen
    from flopscope.tui.app.screens.source import SourceScreen
    from textual.widgets import DataTable

    from ..conftest import settle
    from ..helpers.app import make_app, ready

    report = read_report(fixture_path(CUB))
    # summed here, not by the reader
    samples = samples_by_address(report_actions(fixture_path(CUB))[3])
    hottest = sorted(samples, key=lambda a: (-samples[a], a))[:2]
    app = make_app(report, by="launch")
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(app, pilot)
        shown = screen.model.shown()
        await pilot.press(*["j"] * int((shown["launch_id"] == 3).to_numpy().argmax()), "enter")
        assert isinstance(app.screen, KernelScreen)
        await pilot.press("v")
        await settle(
            pilot, lambda: isinstance(app.screen, SourceScreen) and app.screen.page is not None
        )
        table = app.screen.query_one(DataTable)

        def at_cursor() -> int:
            return int(str(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value))

        assert at_cursor() == hottest[0]
        await pilot.press("n")
        assert at_cursor() == hottest[1]
        await pilot.press("o")  # hottest first: the cursor stays on its line
        assert at_cursor() == hottest[1] and table.cursor_row == 1
        await pilot.press("escape")
        assert isinstance(app.screen, KernelScreen)


async def test_c_shows_the_page_by_cuda_line_with_its_text_and_back():
    """The CUB report embeds its files: each SASS row ends in its CUDA line's text (as NVIDIA's
    ncu_report holds the file), and `c` turns the page into one row per CUDA line, the cursor on the
    hottest (the samples of its SASS lines summed here, from ncu_report's own counters)."""
    from flopscope.tui.app.screens.kernel import KernelScreen
    from flopscope.tui.app.screens.source import SourceScreen
    from textual.widgets import DataTable

    from ..conftest import settle
    from ..helpers.app import make_app, ready

    action = report_actions(fixture_path(CUB))[3]
    samples = samples_by_address(action)
    files = {str(k): str(action.source_files()[k]).split("\n") for k in action.source_files()}
    per_line: dict[tuple[str, int], int] = {}
    for address, n in samples.items():
        info = action.source_info(address)
        if info is not None:
            key = (str(info.file_name()), int(info.line()))
            per_line[key] = per_line.get(key, 0) + n
    (file, line), most = max(per_line.items(), key=lambda kv: kv[1])
    report = read_report(fixture_path(CUB))
    app = make_app(report, by="launch")
    async with app.run_test(size=(160, 30)) as pilot:
        screen = await ready(app, pilot)
        shown = screen.model.shown()
        await pilot.press(*["j"] * int((shown["launch_id"] == 3).to_numpy().argmax()), "enter")
        assert isinstance(app.screen, KernelScreen)
        await pilot.press("v")
        await settle(
            pilot, lambda: isinstance(app.screen, SourceScreen) and app.screen.page is not None
        )
        table = app.screen.query_one(DataTable)
        titles = [str(c.label) for c in table.columns.values()]
        assert titles[-1] == "CUDA"
        hottest = max(samples, key=lambda a: (samples[a], -a))
        info = action.source_info(hottest)
        row = table.get_row(str(hottest))
        assert row[-1] == files[str(info.file_name())][int(info.line()) - 1].strip()
        await pilot.press("c")
        titles = [str(c.label) for c in table.columns.values()]
        assert titles[:4] == ["Source", "Samples", "%", "CUDA"]
        cells = table.get_row_at(table.cursor_row)
        assert cells[0] == f"{file.rsplit('/', 1)[-1]}:{line}" and cells[1] == f"{most:,}"
        assert cells[3] == files[file][line - 1].strip()
        await pilot.press("c")
        assert next(str(c.label) for c in table.columns.values()) == "Address"
        assert (
            int(str(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)) == hottest
        )


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_report_whose_sass_ncu_report_cannot_disassemble_says_so_once(
    size, tmp_path, snapshot_update
):
    """NVIDIA's ncu_report gives `???` for every address of the V100 report (ncu's CLI prints the
    text: its disassembler is in the ncu binary): the page says so above the table and each line's
    SASS cell says it has none, never `???`, at 80x24 and 160x48."""
    from flopscope.tui.app.screens.source import SourceScreen
    from flopscope.tui.presentation.source_page import NO_SASS_CELL

    from ..conftest import settle
    from ..helpers.app import make_app, ready, screen_lines
    from ..helpers.snapshots import check

    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    report = read_report(path)
    action = report_actions(path)[0]
    assert {action.sass_by_pc(a) for a in samples_by_address(action)} == {"???"}
    app = make_app(report, by="launch")
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("enter", "v")
        await settle(
            pilot, lambda: isinstance(app.screen, SourceScreen) and app.screen.page is not None
        )
        text = "\n".join(screen_lines(app))
        assert "No SASS text: the installed ncu_report" in text
        assert "???" not in text
        if size[0] >= 160:  # the SASS column, fourth, in view
            assert NO_SASS_CELL in text
        check(
            f"source-no-sass-{size[0]}x{size[1]}",
            app.export_screenshot(),
            snapshot_update,
            tmp_path,
        )
