"""The column chooser (`C` on the Kernels screen, issue 43.2): every column of the canonical table
the rows have, with its unit and meaning; show, hide and reorder; the choice kept in config.toml
beside the keymap (its other lines untouched) and shown again by the next app, as `flopscope open`
starts it."""

from __future__ import annotations

import tomllib

import pytest
from flopscope.core import FlopscopeError
from flopscope.core.table import ALL, DESCRIPTIONS
from flopscope.tui.app.column_choice import load_columns, save_columns
from flopscope.tui.app.keymap import load_keymap
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.columns import ColumnsScreen
from flopscope.tui.app.screens.help import binding_rows
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.widgets import OptionList

from ..conftest import settle
from ..helpers.app import opened_app, ready

pytestmark = pytest.mark.slow


async def _to(pilot, chooser: ColumnsScreen, key: str) -> None:
    options = chooser.query_one(OptionList)
    while chooser.order[options.highlighted] != key:
        await pilot.press("down")


async def test_c_lists_every_column_with_unit_and_meaning_and_the_choice_survives_a_restart(
    demo, home
):
    config = home / "config.toml"
    config.write_text('# mine\n[keymap]\n"kernels.roofline" = "R"\n', encoding="utf-8")
    app = opened_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        # what `?` lists
        assert ("C", "Columns") in [(keys, what) for _, keys, what in binding_rows(screen)]
        default = [c.name for c in screen.model.columns]
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        chooser = app.screen
        rows = screen.model.rows
        assert set(chooser.order) == {k for k, _, _ in ALL if k in rows and k != "kernel"}
        assert chooser.chosen == default[1:]  # opens on the table's own columns, in order
        time = str(chooser.query_one(OptionList).get_option("duration_s").prompt)
        assert "Time" in time and "[s]" in time and DESCRIPTIONS["duration_s"][:20] in time
        await _to(pilot, chooser, "pct_time")
        await pilot.press("space")  # hide %Time
        await _to(pilot, chooser, "roof")
        await pilot.press("K", "K")  # Bound two places up: before AI
        await _to(pilot, chooser, "registers")
        await pilot.press("space")  # show a column the table does not have by default
        expected = [k for k in default[1:] if k != "pct_time"]
        expected.remove("roof")
        expected.insert(expected.index("ai_dram"), "roof")
        expected.append("registers")
        assert chooser.chosen == expected
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is screen)
        assert [c.name for c in screen.model.columns] == ["kernel", *expected]
        table = screen.query_one(KernelTable)
        assert "registers" in [c.name for _, c, _ in table.layout_columns] or "registers" in str(
            table.hidden_columns
        )
    saved = tomllib.loads(config.read_text(encoding="utf-8"))
    assert saved["columns"]["kernels"] == expected
    assert load_keymap(config) == {"kernels.roofline": "R"} and config.read_text().startswith(
        "# mine\n"
    )

    again = opened_app(demo)  # a restart: config.toml read anew
    async with again.run_test(size=(100, 30)) as pilot:
        screen = await ready(again, pilot)
        assert [c.name for c in screen.model.columns] == ["kernel", *expected]
        # every grouping: its own first column, then the choice (a launch: its ID for N)
        await pilot.press("g")
        await settle(
            pilot, lambda: screen.by == "launch" and not screen.query_one(KernelTable).loading
        )
        assert [c.name for c in screen.model.columns] == [
            "kernel",
            *("launch_id" if k == "count" else k for k in expected),
        ]


async def test_escape_keeps_the_columns_and_r_puts_back_the_tables_own(demo, home):
    save_columns("kernels", ["duration_s", "registers"])
    app = opened_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        assert [c.name for c in screen.model.columns] == ["kernel", "duration_s", "registers"]
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        await pilot.press("space", "escape")  # hid Time, then changed its mind
        await settle(pilot, lambda: app.screen is screen)
        assert [c.name for c in screen.model.columns] == ["kernel", "duration_s", "registers"]
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        await pilot.press("r", "enter")
        await settle(pilot, lambda: app.screen is screen)
        own = kernels_app(demo.meta.source, report=demo)  # no choice at all
        async with own.run_test(size=(100, 30)) as own_pilot:
            own_screen = await ready(own, own_pilot)
            assert [c.name for c in screen.model.columns] == [
                c.name for c in own_screen.model.columns
            ]
    assert load_columns()["kernels"] == [c.name for c in screen.model.columns[1:]]


def test_a_bad_choice_in_config_is_one_line_naming_the_fix(home):
    (home / "config.toml").write_text(
        '[columns]\nkernels = ["duration_s", "no_such"]\n', encoding="utf-8"
    )
    with pytest.raises(FlopscopeError, match="names no column 'no_such'"):
        load_columns()
    (home / "config.toml").write_text("[columns]\nkernels = 3\n", encoding="utf-8")
    with pytest.raises(FlopscopeError, match="not a list of column keys"):
        load_columns()
