"""The module tree screen's step line: a training step's launches under `step N` ranges with a
timing file beside the report show the median step's wall time, kernel time, idle share and MFU
above the tree, each number read here from the raw page and the timing file
(tests/helpers/steps.py); without a timing file, how to get one; a damaged one, its one line (the
tree still opens)."""

from __future__ import annotations

import statistics

from flopscope.core import read_report
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.presentation import format as fmt

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.steps import page_steps, two_step_page, write_timing


async def _tree_lines(page) -> list[str]:
    report = read_report(page)
    app = make_app(report)
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(app, pilot)
        app.push_screen(ModuleTreeScreen(report, page.parent / "modules.csv"))
        await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
        await pilot.pause()
        return screen_lines(app)


async def test_the_median_step_is_shown_above_the_tree_with_where_its_numbers_come_from(tmp_path):
    page = two_step_page(tmp_path / "raw.csv", steps=3)
    walls = {1: 0.0412, 2: 0.00311, 3: 0.00297}
    write_timing(tmp_path, walls)
    kernel, *_ = page_steps(page)
    wall = statistics.median([walls[2], walls[3]])  # step 1, the warm-up, left out
    kernel_s = statistics.median([kernel[2], kernel[3]])
    text = " ".join(line.strip() for line in await _tree_lines(page))
    assert "Step (median of 2):" in text
    assert f"wall {fmt.seconds(wall)} (timing run, no ncu)" in text
    assert f"kernel {fmt.seconds(kernel_s)} (ncu)" in text
    assert f"idle {fmt.share(1 - kernel_s / wall)}" in text
    assert "MFU" in text and "(all launches)" in text


async def test_without_a_timing_file_the_screen_says_how_to_get_one(tmp_path):
    text = " ".join(line.strip() for line in await _tree_lines(two_step_page(tmp_path / "raw.csv")))
    assert "no timing file" in text and "flopscope profile --modules" in text


async def test_a_damaged_timing_file_is_its_one_line_and_the_tree_still_opens(tmp_path):
    page = two_step_page(tmp_path / "raw.csv")
    (tmp_path / "timing.json").write_text("{")
    text = " ".join(line.strip() for line in await _tree_lines(page))
    assert "timing.json: not a JSON timing file" in text and "(all launches)" in text
