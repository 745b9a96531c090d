"""Issue 41.6's smaller untruths, as the app shows them (Pilot, real files)."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.kernel_pair import KernelPairScreen
from flopscope.tui.app.screens.sort import SortScreen
from flopscope.tui.presentation import format as fmt
from textual.widgets import Input, OptionList

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, screen_lines, wait_for_rows
from ..helpers.raw_csv import raw_kernel_time_s

# Labels whose values are text from the report, which a report may not hold (a .ncu-rep names no
# process).
TEXT_LABELS = ("Process", "NVTX", "Grid", "Block")


async def test_the_kernel_screen_shows_no_label_without_a_value():
    """The H100 capture's launches name no process and no NVTX range: no `Process` line with nothing
    beside it; the grid, which ncu recorded, is still shown with its value."""
    app = make_app(read_report(fixture_path(H100)))
    # tall: every panel on screen at once, in one column
    async with app.run_test(size=(80, 200)) as pilot:
        await ready(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, KernelScreen)
        await pilot.pause()
        lines = [line.strip() for line in screen_lines(app)]
    # a label alone on its line: an empty value
    assert not [line for line in lines if line in TEXT_LABELS]
    grid = next(line for line in lines if line.startswith("Grid"))
    assert grid.removeprefix("Grid").strip().startswith("(")  # `Grid  (1024, 1, 1)`


async def test_the_runs_screen_is_newest_first_as_its_status_says(tmp_path):
    """It reversed the store's id order: an imported run, stored last with its own older capture
    time, came first under "newest first"."""
    store = Store(tmp_path / "runs.db")
    report = read_report(fixture_path(H100))
    for name, day in (("middle", 2), ("oldest", 1), ("newest", 3)):
        store.save(report, name, created=1_760_000_000 + day * 86400.0)
    store.close()
    app = runs_app(tmp_path / "runs.db")
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        model = app.first.model
        assert [model.row(i)["name"] for i in range(len(model))] == ["newest", "middle", "oldest"]
        assert "newest first" in str(app.first.query_one("#status").render())


SWEEP_HOME = (
    Path(__file__).parents[1]
    / "data"
    / "gpu"
    / "nvidia_h100_80gb_hbm3"
    / "flopscope_sweep"
    / "home"
)


def stored_batch_sizes(db: Path) -> dict[str, str]:
    """Each run's batch_size as the store holds it (sqlite3 and json, not the code under test)."""
    with contextlib.closing(sqlite3.connect(db)) as con:
        return {
            name: json.loads(params)["batch_size"]
            for name, params in con.execute("SELECT name, params FROM runs")
        }


async def filtered_runs(db: Path, typed: str) -> set[str]:
    app = runs_app(db)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        app.screen.query_one(Input).value = typed
        await pilot.press("enter")
        await pilot.pause()
        model = app.first.model
        return {str(model.row(i)["name"]) for i in range(len(model))}


async def test_a_parameter_filter_matches_the_whole_value(tmp_path):
    """The project's batch-size sweep (1, 8, 16, 32, 64, 1024): `/ batch_size=1` also listed 16 and
    1024."""
    shutil.copytree(SWEEP_HOME, tmp_path / "home")
    db = tmp_path / "home" / "flopscope.db"
    sizes = stored_batch_sizes(db)
    assert {"1", "16", "1024"} <= set(sizes.values())
    assert await filtered_runs(db, "batch_size=1") == {n for n, bs in sizes.items() if bs == "1"}
    assert await filtered_runs(db, "batch_size=1|batch_size=8") == {
        n for n, bs in sizes.items() if bs in ("1", "8")
    }
    # a value written as a regex is still one: 1 followed by digits
    assert await filtered_runs(db, r"batch_size=1\d+") == {
        n for n, bs in sizes.items() if re.fullmatch(r"1\d+", bs)
    }


async def test_the_sort_picker_names_every_column_by_its_title():
    """It listed `peak_l2_bytes_per_s`, `sol_dram_pct` and `pipe_fma_pct` among the titles. The H100
    capture (`--set full`) has ncu's speed of light, occupancy and pipes, so they are offered."""
    report = read_report(fixture_path(H100))
    app = make_app(report)
    # the keys --json and exports use
    keys = set(report.kernels.columns) | set(report.group("name").columns)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("o")
        assert isinstance(app.screen, SortScreen)
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        empty = list(app.screen.empty)
        offered = {name for name, _ in app.screen.choices}
    titles = [label.split(" · ")[0] for label in labels]
    assert {"peak_l2_bytes_per_s", "sol_dram_pct", "pipe_fma_pct"} <= offered
    assert not [t for t in [*titles, *empty] if t in keys]  # a key where a title belongs
    assert len(set(titles)) == len(titles)  # and no two columns offered under one title


def raw_duration_s(run: str) -> float:
    # ncu's own page in the run's folder
    return raw_kernel_time_s(SWEEP_HOME / "runs" / run / "raw.csv")


async def test_the_diffs_side_by_side_has_a_change_column(tmp_path):
    """The project's H100 sweep: batch 8 against batch 16 ran one GEMM; `enter` on it showed A and B
    with no change beside them. Now a Δ column: B - A and its % of A."""
    shutil.copytree(SWEEP_HOME, tmp_path / "home")
    names = ("linear_h100-batch_size=8", "linear_h100-batch_size=16")
    with Store(tmp_path / "home" / "flopscope.db") as store:
        a, b = (store.load(n) for n in names)
    app = FlopscopeApp(DiffScreen(diff_runs(a, b), *names, reports=(a, b)))
    async with app.run_test(size=(140, 60)) as pilot:
        await wait_for_rows(pilot, app.screen)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelPairScreen))
        await pilot.pause()
        lines = screen_lines(app)
    header = next(line for line in lines if line.lstrip().startswith("A: "))
    assert "Δ B - A" in header
    ta, tb = (raw_duration_s(n) for n in names)
    assert ta != tb
    delta = (
        f"{'+' if tb > ta else ''}{fmt.seconds(tb - ta)}"
        f" ({'+' if tb > ta else ''}{fmt.pct(100 * (tb - ta) / ta)})"
    )
    total = next(line for line in lines if line.lstrip().startswith("Total time"))
    assert total.rstrip().endswith(delta), total
