"""The column chooser (`C`) on the Runs, Diff and Reconcile tables (issue 43): their own columns
offered, the first (what a row is) always first; hide and reorder; the choice kept per table in
config.toml and shown by the next app, as `flopscope runs`, `diff` and `model --reconcile` start it
(column_choice.load_columns)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.column_choice import load_columns
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.screens.columns import ColumnsScreen
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.help import binding_rows
from flopscope.tui.app.screens.reconcile import ReconcileScreen
from flopscope.tui.app.screens.table_columns import diff_columns, run_columns
from flopscope.tui.presentation.reconcile_table import reconcile_columns
from textual.widgets import OptionList

from ..conftest import settle
from ..helpers.reconciled import demo_reconciled

pytestmark = pytest.mark.slow
H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"


@pytest.fixture(scope="module")
def pair():
    return tuple(read_report(H100 / f"train_transformer_bf16_bs{n}.ncu-rep.xz") for n in (8, 32))


def _app(table: str, pair, home: Path) -> FlopscopeApp:
    """The table's app as its command starts it: the choices read from config.toml."""
    if table == "runs":
        if not (home / "runs.db").exists():
            with Store(home / "runs.db") as store:
                for n, report in enumerate(pair):
                    store.save(report, f"run{n}")
        app = runs_app(home / "runs.db")
        app.columns = load_columns()  # as run_runs does
        return app
    if table == "diff":
        return FlopscopeApp(DiffScreen(diff_runs(*pair), "bs8", "bs32"), columns=load_columns())
    report, model, result = demo_reconciled()
    screen = ReconcileScreen(
        "Reconcile", result, ["a note"], model.train, report=report, model=model
    )
    return FlopscopeApp(screen, columns=load_columns())


def _own(table: str) -> list[str]:
    """The table's columns as its own code lists them (not read from the screen)."""
    columns = {
        "runs": run_columns(),
        "diff": diff_columns("name"),
        "reconcile": reconcile_columns(train=True),
    }
    return [c.name for c in columns[table]]


async def _shown(app, pilot):
    await settle(
        pilot, lambda: getattr(app.screen, "model", None) is not None and app.screen.is_mounted
    )
    await pilot.pause(0.1)
    return app.screen


async def _to(pilot, chooser: ColumnsScreen, key: str) -> None:
    options = chooser.query_one(OptionList)
    while chooser.order[options.highlighted] != key:
        await pilot.press("down")


@pytest.mark.parametrize("table", ["runs", "diff", "reconcile"])
async def test_c_chooses_the_tables_own_columns_and_the_choice_survives_a_restart(
    table, pair, home
):
    own = _own(table)
    hidden, moved = own[2], own[-1]  # hide the third column, bring the last up to second place
    expected = [own[0], moved, *(k for k in own[1:-1] if k != hidden)]
    app = _app(table, pair, home)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await _shown(app, pilot)
        assert [c.name for c in screen.model.columns] == own
        # what `?` lists
        assert ("C", "Columns") in [(keys, what) for _, keys, what in binding_rows(screen)]
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        chooser = app.screen
        assert chooser.order == own[1:] and chooser.chosen == own[1:]
        await _to(pilot, chooser, hidden)
        await pilot.press("space")
        await _to(pilot, chooser, moved)
        await pilot.press(*["K"] * (len(own) - 2))  # to the top of the list
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is screen)
        assert [c.name for c in screen.model.columns] == expected
    saved = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    assert saved["columns"] == {table: expected[1:]}

    again = _app(table, pair, home)  # a restart: config.toml read anew
    async with again.run_test(size=(120, 30)) as pilot:
        screen = await _shown(again, pilot)
        assert [c.name for c in screen.model.columns] == expected


async def test_marking_run_a_keeps_the_runs_choice(pair, home):
    (home / "config.toml").write_text(
        '[columns]\nruns = ["total_time_s", "gpu"]\n', encoding="utf-8"
    )
    app = _app("runs", pair, home)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await _shown(app, pilot)
        assert [c.name for c in screen.model.columns] == ["name", "total_time_s", "gpu"]
        await pilot.press("m")
        await pilot.pause(0.1)
        assert screen.marked and [c.name for c in screen.model.columns] == [
            "name",
            "total_time_s",
            "gpu",
        ]
        assert screen.model.cells(screen.query_one("KernelTable").cursor_row)[0].startswith("[A] ")


def test_a_choice_of_a_column_the_table_has_not_is_one_line(home):
    (home / "config.toml").write_text(
        '[columns]\nruns = ["total_time_s", "registers"]\n', encoding="utf-8"
    )
    with pytest.raises(FlopscopeError, match=r"\[columns\] runs names no column 'registers'"):
        load_columns()
