"""The screens past the Kernels screen at 80x24, each against its SVG in tests/snapshots/ (see
tests/helpers/snapshots.py): Runs and Diff over a store of the project's own H100 captures, the
live sweep and the Sweep screen it hands over to, the live profile, and Reconcile.

Each snapshot is the same on every machine and run: the store is the captured sweep's
(tests/data/gpu/) with the demo's training steps imported beside it, dated as their reports say
and shown in UTC; paths are relative to the tmp folder the test works in; the live screens' clocks
read the times the captures recorded, and each is shot once its run is over, before it hands over.
"""

from __future__ import annotations

import json
import shlex
import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.scaling import load_sweep
from flopscope.core.ncu.progress import parse_lines
from flopscope.core.profiling.profiler import ProfileResult
from flopscope.core.profiling.sweep import PointResult
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import kernels_app, live_sweep_app, runs_app
from flopscope.tui.app.screens import live_sweep
from flopscope.tui.app.screens import profile as profile_screen
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.live_sweep import LiveSweepScreen
from flopscope.tui.app.screens.profile import ProfileScreen
from flopscope.tui.app.screens.reconcile import ReconcileScreen
from flopscope.tui.app.screens.sweep import SweepScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.cli.main import bundled_example
from flopscope.tui.cli.model import _reconcile_lines

from ..conftest import settle
from ..helpers.app import pushed_kernels, screen_lines
from ..helpers.h100_replay import H100, RUN
from ..helpers.reconciled import demo_reconciled
from ..helpers.snapshots import SIZE, check

SWEEP = "linear_h100"  # `flopscope sweep` on the H100: one nn.Linear at six batch sizes
# The demo's bf16 transformer training step and the same step at batch 32: a diff of real kernels.
STEPS = {
    "bf16-bs8": Path(bundled_example()),
    "bf16-bs32": H100 / "train_transformer_bf16_bs32.ncu-rep.xz",
}


@pytest.fixture
def utc():
    """Dates as the store's epoch seconds in UTC: the same text in every time zone."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


@pytest.fixture
def home(tmp_path, monkeypatch, utc) -> Path:
    """The captured sweep's store, with the bf16 training steps at batch 8 and 32 stored after it as
    `flopscope import` stores them (dated when ncu captured them); the test works in it."""
    home = tmp_path / "home"
    shutil.copytree(H100 / "flopscope_sweep" / "home", home)
    with Store(home / "flopscope.db") as store:
        for name, path in STEPS.items():
            report = read_report(path)
            store.save(report, name, created=report.meta.captured)
    monkeypatch.setenv("FLOPSCOPE_HOME", str(home))
    monkeypatch.chdir(home)
    return home


def names(app: FlopscopeApp) -> list[str]:
    model = app.screen.model
    return [str(model.row(i)["name"]) for i in range(len(model))]


async def test_runs_and_diff_match_their_snapshots(home, tmp_path, snapshot_update):
    """The Runs screen as it opens, then `m` on batch 8's step and `d` on batch 32's: their Diff."""
    app = runs_app(Path("flopscope.db"))
    shots = {}
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: app.screen.model is not None)
        shots["runs"] = app.export_screenshot()
        table = app.screen.query_one(KernelTable)
        table.cursor_row = names(app).index("bf16-bs8")
        await pilot.press("m")
        table.cursor_row = names(app).index("bf16-bs32")
        await pilot.press("d")
        await settle(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.model, 500)
        await pilot.pause(0.1)
        shots["diff"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)


class FrozenClock:
    """time.monotonic for a live screen: the moment the test sets, as the capture recorded it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_the_live_sweep_and_its_findings_match_their_snapshots(
    home, tmp_path, monkeypatch, snapshot_update
):
    """`flopscope sweep` of the captured sweep, its callbacks replayed from the runs it stored
    (started and finished as each run.json says): the live screen once every point is done, then
    the Sweep screen."""
    with Store(home / "flopscope.db") as store:
        runs = store.runs(sweep=SWEEP)
        lines = load_sweep(SWEEP, store)
    # The points as the sweep ran them, each with the times its run.json recorded.
    points = [
        (dict(params), run, json.loads((home / "runs" / run / "run.json").read_text()))
        for run, params in zip(runs["name"], runs["params"], strict=True)
    ]
    clock = FrozenClock(points[0][2]["started"])
    monkeypatch.setattr(live_sweep, "time", SimpleNamespace(monotonic=clock))
    over, go = threading.Event(), threading.Event()

    def job(on_start, on_state, on_point, on_host_lost):
        for params, run, times in points:
            clock.now = times["started"]
            on_start(params, "localhost")
            clock.now = times["finished"]
            on_point(PointResult(params, "stored", run=run, host="localhost"))
        over.set()
        go.wait(30)  # the shot is taken before the findings take over
        return lines, None

    screen = LiveSweepScreen(job, [p for p, _, _ in points], SWEEP)
    screen.states.clock = clock
    app = live_sweep_app(screen)
    shots = {}
    async with app.run_test(size=SIZE) as pilot:
        # DataTable widens a column when it is next idle, not when its cell changes, and redraws
        # at the new width an idle later: the shot waits until each point's state shows whole.
        states = [f" done: {run} " for _, run, _ in points]
        await settle(
            pilot,
            lambda: over.is_set() and all(s in "\n".join(screen_lines(app)) for s in states),
        )
        await pilot.pause(0.1)
        shots["live-sweep"] = app.export_screenshot()
        go.set()
        await settle(pilot, lambda: isinstance(app.screen, SweepScreen))
        await pilot.pause(0.1)
        shots["sweep"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)


async def test_the_live_profile_matches_its_snapshot(tmp_path, monkeypatch, snapshot_update):
    """`flopscope profile` of the captured linear_bs8 run: ncu's console as the H100 printed it
    (its ncu.log), parsed line by line as profile() parses ncu's, the screen shot once ncu is done,
    before the report shows. (The stand-in ncu would name its report under a random tmp folder in
    the last line; the capture's own line is the same on every run.)"""
    run = json.loads((RUN / "run.json").read_text())
    clock = FrozenClock(run["started"])
    monkeypatch.setattr(profile_screen, "time", SimpleNamespace(monotonic=clock))
    over, go = threading.Event(), threading.Event()

    def job(on_event, on_process):
        with (RUN / "ncu.log").open() as console:
            for event in (e for line in console for e in parse_lines(line)):
                on_event(event)
        clock.now = run["finished"]
        over.set()
        go.wait(30)  # the shot is taken before the Kernels screen takes over
        return ProfileResult(RUN, read_report(RUN / "report.ncu-rep.xz"))

    command = shlex.join(["python3", "workloads.py", "linear", "--batch-size", "8"])
    screen = ProfileScreen(job, f"ncu on localhost: {command}  ·  run folder runs/linear_bs8")
    app = kernels_app(RUN / "report.ncu-rep", live=screen)
    took = f"{run['finished'] - run['started']:6.1f} s"  # the status line's, ncu done
    async with app.run_test(size=SIZE) as pilot:
        status = screen.query_one("#profile-status")
        # its next tick (every 0.5 s) reads the finished time
        await settle(pilot, lambda: over.is_set() and str(status.render()).startswith(took))
        svg = app.export_screenshot()
        go.set()
    check("profile", svg, snapshot_update, tmp_path)


async def test_reconcile_matches_its_snapshot(tmp_path, snapshot_update):
    """`flopscope reconcile` of the demo's bf16 training step with the Block it ran."""
    report, model, result = demo_reconciled()
    # As `flopscope reconcile` titles it, run in tests/data/gpu/ (the paths here are absolute).
    title = (
        f"Reconcile {Path(result.report).name} with {Path(model.model).name} ({model.model_type}), "
        f"input {'x'.join(map(str, model.input_shape))}, {result.precision}, {result.steps} step(s)"
    )
    app = FlopscopeApp(
        ReconcileScreen(
            title, result, _reconcile_lines(result), model.train, report=report, model=model
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ReconcileScreen))
        await pilot.pause(0.1)
        svg = app.export_screenshot()
    check("reconcile", svg, snapshot_update, tmp_path)


async def test_the_source_page_and_the_column_chooser_match_their_snapshots(
    tmp_path, monkeypatch, snapshot_update
):
    """This round's new screens: the Kernel screen's `v` (the demo has no source counters, so the
    shared H100 CUB full-set report's launch 3) and the column chooser (`C`). The command palette is
    Textual's own, its styles numbered in the order its search answers:
    tests/app/test_command_palette.py drives it instead."""
    from flopscope.tui.app.screens.kernel import KernelScreen
    from flopscope.tui.app.screens.source import SourceScreen

    from ..conftest import fixture_path
    from ..helpers.app import make_app, ready

    cub = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    shutil.copy(cub, tmp_path / cub.name)
    monkeypatch.chdir(tmp_path)
    app = make_app(read_report(cub.name), by="launch")
    shots = {}
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(app, pilot)
        shown = screen.model.shown()
        await pilot.press(*["j"] * int((shown["launch_id"] == 3).to_numpy().argmax()), "enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        await pilot.press("v")
        await settle(
            pilot, lambda: isinstance(app.screen, SourceScreen) and app.screen.page is not None
        )
        await pilot.pause(0.1)
        shots["source"] = app.export_screenshot()
    demo = Path(bundled_example())
    monkeypatch.chdir(demo.parent)
    app = kernels_app(demo.name)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.kernels
        await settle(
            pilot,
            lambda: screen.model is not None and not screen.query_one(KernelTable).loading,
            500,
        )
        await pilot.press("C")
        await pilot.pause(0.2)
        shots["column-chooser"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)


async def test_a_run_its_columns_and_a_kernel_pair_match_their_snapshots(
    home, tmp_path, snapshot_update
):
    """From the Runs screen: its column chooser (`C`, the table's own columns), `enter` on batch
    8's step (the Kernels screen of a stored run), and the Diff of batch 8 with batch 32 opened on
    its top group, which both ran (`enter`: the Kernel screen's sections of A and B side by
    side)."""
    from flopscope.tui.app.screens.columns import ColumnsScreen
    from flopscope.tui.app.screens.kernel_pair import KernelPairScreen

    app = runs_app(Path("flopscope.db"))
    shots = {}
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: app.screen.model is not None)
        runs = app.screen
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, ColumnsScreen))
        await pilot.pause(0.1)
        shots["runs-columns"] = app.export_screenshot()
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is runs)
        table = runs.query_one(KernelTable)
        table.cursor_row = names(app).index("bf16-bs8")
        await pilot.press("enter")
        await pushed_kernels(app, pilot, tries=500)
        await pilot.pause(0.1)
        shots["run-kernels"] = app.export_screenshot()
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is runs)
        table.cursor_row = names(app).index("bf16-bs8")
        await pilot.press("m")
        table.cursor_row = names(app).index("bf16-bs32")
        await pilot.press("d")
        await settle(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.model, 500)
        assert app.screen.current_row()["presence"] == "both"  # the top group: A and B ran it
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelPairScreen), 500)
        await pilot.pause(0.1)
        shots["kernel-pair"] = app.export_screenshot()
    for name, svg in shots.items():
        check(name, svg, snapshot_update, tmp_path)
