"""A big stored run in the app, as `flopscope open RUN` shows it: 10k real launches (a real
report's, repeated) saved to a run store and loaded back; the table has one row per kernel name in
time order, and `s` sorts it. The expected rows come from plain pandas over the stored launches, not
from the engine's grouping."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from flopscope.core import Report, read_report
from flopscope.core.store.run_store import Store
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path
from ..helpers.app import H100, focus_column, ready

LAUNCHES = 10_000


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    """A run store holding run `big`: the H100 fixture's 18 launches repeated to LAUNCHES."""
    base = read_report(fixture_path(H100))
    kernels = base.kernels.iloc[np.resize(np.arange(len(base.kernels)), LAUNCHES)].reset_index(
        drop=True
    )
    kernels["launch_id"] = np.arange(LAUNCHES)
    big = Report(
        meta=replace(base.meta, launches=LAUNCHES),
        kernels=kernels,
        gpu=base.gpu,
        missing=base.missing,
    )
    path = tmp_path_factory.mktemp("home") / "flopscope.db"
    with Store(path) as store:
        store.save(big, "big")
    return path


@pytest.fixture
def stored(store_path) -> Report:
    with Store(store_path) as store:
        return store.load("big")


async def test_a_big_stored_run_shows_one_row_per_kernel_in_time_order(stored):
    launches = stored.kernels
    assert len(launches) == LAUNCHES
    time_per_name = (
        launches.groupby("kernel", observed=True)["duration_s"].sum().sort_values(ascending=False)
    )
    app = kernels_app("big", report=stored)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        model = screen.model
        assert len(model) == model.total == len(time_per_name) == launches["kernel"].nunique()
        assert [str(model.row(i)["kernel"]) for i in range(len(model))] == [
            str(n) for n in time_per_name.index
        ]
        assert f"{len(time_per_name)}/{len(time_per_name)} rows" in str(
            screen.query_one("#status").render()
        )
        launches_shown = sum(int(model.row(i)["count"]) for i in range(len(model)))
        assert launches_shown == LAUNCHES


async def test_s_sorts_a_big_stored_run_by_launch_count(stored):
    per_name = stored.kernels.groupby("kernel", observed=True).size()
    app = kernels_app("big", report=stored)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        await focus_column(pilot, table, "count")
        await pilot.press("s")
        await pilot.pause()
        model = screen.model
        assert model.query.sort == "count" and model.query.descending
        shown = {str(model.row(i)["kernel"]): int(model.row(i)["count"]) for i in range(len(model))}
        assert list(shown.values()) == sorted(per_name.to_numpy(), reverse=True)
        assert shown == {str(name): int(n) for name, n in per_name.items()}
