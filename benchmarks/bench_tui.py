"""How fast the terminal app is on big reports: first paint, sort, filter, cursor step. Prints a table.

    python benchmarks/bench_tui.py [--sizes 100000 1000000] [--fixture PATH] [--no-tmux]

A synthetic Report repeats the launches of a real fixture (read once with `read_report`) up to each size,
so every column holds real values. The app runs headless (`App.run_test`, 120x40); a frame is timed when
Textual hands the compositor's update to the driver, encoded to terminal bytes as a real terminal would
get them. Textual paces frames at 60 per second, so up to ~17 ms of any number is waiting for the frame.

    tmux          `flopscope open RUN` typed -> rows of the table on a real terminal (tmux, 120x40), the report
                  stored as a run first (a temporary FLOPSCOPE_HOME): start-up, the store's Parquet read, the
                  app and first paint, as a person waits for them (issue 25.5); polled every 10 ms
    screen        app start -> first frame (the Kernels screen, loading): what a person waits to see anything
    first paint   app start -> first frame showing rows of the per-launch view (includes Report.group)
    engine        the engine's part of first paint: Report.group("launch") inside the app
    app           first paint minus group: what the app itself adds
    sort          `s` on the FLOP/s column -> frame (numeric sort on the real values)
    filter        regex filter applied -> frame
    regroup       `g` from the launches to the next grouping (by NVTX range) -> frame with its rows (the first time:
                  Report.group runs, in a worker)
    cursor        `down` -> frame (median of 20)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from flopscope.core import Report, read_report
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.presentation.table_model import parse_filter
from textual import events

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"
FIXTURE = FIXTURES / "v100_ncar_miniweather_fp64_full.ncu-rep"
TARGETS = {"first paint": {100_000: 0.5, 1_000_000: 1.5}, "sort": 0.15, "filter": 0.15, "regroup": 0.15, "cursor": 0.05}


def synthetic(report: Report, launches: int) -> Report:
    """`launches` rows repeating the fixture's launches, with fresh launch ids."""
    base = report.kernels
    reps = -(-launches // len(base))
    kernels = base.iloc[np.tile(np.arange(len(base)), reps)[:launches]].reset_index(drop=True)
    kernels["launch_id"] = np.arange(launches)
    return Report(meta=replace(report.meta, launches=launches), kernels=kernels, gpu=report.gpu, missing=report.missing)


class Frames:
    """Timestamps of frames the app sends to its (headless) driver."""

    def __init__(self, app: FlopscopeApp) -> None:
        self.times: list[float] = []
        self.app = app
        original = app._display

        def display(screen, renderable) -> None:
            original(screen, renderable)
            if renderable is not None:
                renderable.render_segments(app.console)  # the bytes a terminal would be sent
                self.times.append(time.perf_counter())

        app._display = display

    async def after(self, start: float, changed, timeout: float = 30.0) -> float:
        """Seconds from `start` to the first frame drawn once `changed()` holds (the change is on screen)."""
        deadline = time.perf_counter() + timeout
        while not changed():
            if time.perf_counter() > deadline:
                raise TimeoutError("the change never happened")
            await asyncio.sleep(0.0005)
        count = len(self.times)  # frames before this point were drawn before the change
        while len(self.times) <= count:
            if time.perf_counter() > deadline:
                raise TimeoutError("no frame after the change")
            await asyncio.sleep(0.0005)
        return self.times[count] - start


async def measure(report: Report, size: int) -> dict[str, float]:
    big = synthetic(report, size)
    start = time.perf_counter()
    app = kernels_app(report.meta.source, report=big, by="launch")
    frames = Frames(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.kernels
        table = screen.query_one(KernelTable)
        first = await frames.after(start, lambda: screen.model is not None and not table.loading)
        shown = frames.times[0] - start
        assert any("compute_tendencies" in line for line in table.visible_text()), "no rows painted"

        table.cursor_col = [c.name for _, c, _ in table.layout_columns].index("flop_per_s")
        sort = await _key(app, frames, "s", lambda: screen.model.query.sort == "flop_per_s")

        start = time.perf_counter()
        screen._requery(parse_filter("halo|semi", screen.query_state))
        filt = await frames.after(start, lambda: True)
        assert len(screen.model) < size, "filter not applied"

        steps = []
        for _ in range(20):
            row = table.cursor_row
            steps.append(await _key(app, frames, "down", lambda row=row: table.cursor_row == row + 1))
        regroup = await _key(app, frames, "g", lambda: screen.by != "launch" and not table.loading)
        await pilot.pause()
    group = app.group_seconds["launch"]
    return {
        "launches": size,
        "screen": shown,
        "first paint": first,
        "engine": group,
        "app": first - group,
        "sort": sort,
        "filter": filt,
        "regroup": regroup,
        "cursor": statistics.median(steps),
    }


def painted_in_tmux(report: Report, row_text: str, timeout: float = 120.0) -> float:
    """Seconds from starting `flopscope open RUN` in a fresh tmux pane until `row_text` is on its screen."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "FLOPSCOPE_HOME": home}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed flopscope has its bytecode cached
        env["PYTHONPYCACHEPREFIX"] = str(Path(home) / "pyc")
        subprocess.run([sys.executable, "-c", "import flopscope.tui.app.app"], env=env, check=True)  # caches it
        os.environ["FLOPSCOPE_HOME"] = home
        try:
            from flopscope.core.store import Store

            with Store() as store:
                store.save(report, "bench")
        finally:
            del os.environ["FLOPSCOPE_HOME"]
        socket = f"flopscope-bench-{os.getpid()}"
        tmux = ["tmux", "-L", socket]
        command = f"{shutil.which('flopscope') or 'flopscope'} open bench"
        try:
            start = time.perf_counter()
            subprocess.run(
                [
                    *tmux,
                    "new-session",
                    "-d",
                    "-s",
                    "bench",
                    "-x",
                    "120",
                    "-y",
                    "40",
                    *(a for k, v in env.items() if k.startswith(("FLOPSCOPE", "PYTHON")) for a in ("-e", f"{k}={v}")),
                    command,
                ],
                check=True,
            )
            while time.perf_counter() - start < timeout:
                shown = subprocess.run(
                    [*tmux, "capture-pane", "-p", "-t", "bench"], capture_output=True, text=True
                ).stdout
                if row_text in shown:
                    return time.perf_counter() - start
                time.sleep(0.01)
            raise TimeoutError(f"no {row_text!r} on the screen after {timeout:.0f} s")
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)


async def _key(app: FlopscopeApp, frames: Frames, key: str, changed) -> float:
    await asyncio.sleep(0.05)  # let the previous frame settle so each step is timed alone
    start = time.perf_counter()
    app._driver.send_message(events.Key(key, key if len(key) == 1 else None))
    return await frames.after(start, changed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--no-tmux", action="store_true", help="leave out the tmux column (no tmux installed)")
    args = parser.parse_args()
    if not args.fixture.exists():
        raise SystemExit(f"fixture not found: {args.fixture} (pass --fixture PATH to an ncu report)")
    report = read_report(args.fixture)
    rows = [asyncio.run(measure(report, size)) for size in args.sizes]
    for row in rows:
        big = synthetic(report, row["launches"])
        row["tmux"] = None if args.no_tmux else painted_in_tmux(big, "compute_tendencies")
    print(f"fixture: {args.fixture.name} ({len(report.kernels)} launches repeated); times in ms, target in ()")
    titles = [
        ("launches", 10),
        ("tmux", 8),
        ("screen", 7),
        ("first paint", 18),
        ("engine", 8),
        ("app", 8),
        ("sort", 12),
        ("filter", 12),
        ("regroup", 12),
        ("cursor", 10),
    ]
    print(" ".join(f"{title:>{width}}" for title, width in titles))
    for r in rows:
        n = r["launches"]
        cells = [
            _cell(r, "first paint", TARGETS["first paint"].get(n)),
            f"{1000 * r['engine']:8.0f}",
            f"{1000 * r['app']:8.0f}",
            *(_cell(r, name, TARGETS[name] if n <= 100_000 else None) for name in ("sort", "filter", "regroup")),
            _cell(r, "cursor", TARGETS["cursor"]),
        ]
        tmux = "-" if r["tmux"] is None else f"{1000 * r['tmux']:.0f}"
        print(f"{n:>10,} {tmux:>8} {1000 * r['screen']:7.0f} " + " ".join(cells))


def _cell(row: dict, name: str, target: float | None) -> str:
    width = 18 if name == "first paint" else (10 if name == "cursor" else 12)
    text = f"{1000 * row[name]:.0f}" + (f" ({1000 * target:.0f})" if target else "")
    return f"{text:>{width}}"


if __name__ == "__main__":
    main()
