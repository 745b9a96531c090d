"""How fast the terminal app is on big reports: command start to a painted table, sort, filter,
cursor step.

    python benchmarks/bench_tui.py [--sizes 100000 1000000] [--runs 3] [--baseline REV] [--no-tmux]
    [--no-headless]

A synthetic Report repeats the launches of a real fixture (read once with `read_report`) up to each
size, so every column holds real values. Two tables:

tmux (what a user waits for, issue 25.5): `flopscope open RUN` (the synthetic report stored in a
temporary FLOPSCOPE_HOME), `flopscope open FILE.csv` (bench_engine's raw page of that many launches,
the cache off: a first open) and the same opened again with the cache on (`csv cached`), each
started in a fresh tmux pane (120x40), timed until a row of the table is on its screen (polled every
10 ms): start-up, the read, the app and its first paint. Median of --runs; --baseline REV times a
git revision beside this checkout, taking turns (bench_startup's `checkout`), the bytecode of both
cached first as an installed flopscope has it.

headless (the app's own part, from a report already read): `App.run_test` at 120x40; a frame is
timed when Textual hands the compositor's update to the driver, encoded to terminal bytes as a real
terminal would get them. Textual paces frames at 60 per second, so up to ~17 ms of any number is
waiting for the frame.

    screen        app start -> first frame (the Kernels screen, loading): what a person waits
                  to see anything
    first paint   app start -> first frame showing rows of the per-launch view (includes
                  Report.group)
    engine        the engine's part of first paint: Report.group("launch") inside the app
    app           first paint minus group: what the app itself adds
    sort          `s` on the FLOP/s column -> frame (numeric sort on the real values)
    filter        a regex filter applied -> frame (`filter_text`: one that keeps some of the
                  fixture's launches, not all, so that the cursor has rows to step through)
    regroup       `g` from the launches to the next grouping (by NVTX range) -> frame with its
                  rows (shown at once when the background grouping is done, else Report.group
                  runs in a worker first)
    cursor        `down` -> frame (median of 20)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import os
import re
import shlex
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

# What these imports made, frozen out of the cycle collector's walks as `flopscope open` freezes its
# own (tui/app/open_file.py, tui/cli/import_guards.py): unfrozen, each full collection in the
# app walked ~80k more objects, 30-80 ms landing in the keys' frames, which the command has not.
gc.freeze()

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"
FIXTURE = FIXTURES / "v100_ncar_miniweather_fp64_full.ncu-rep"
TMUX_TARGET = "<= 3 s at 100k, <= 10 s at 1M launches (issues 18 and 25)"
TARGETS = {
    "first paint": {100_000: 0.5, 1_000_000: 1.5},
    "sort": 0.15,
    "filter": 0.15,
    "regroup": 0.15,
    "cursor": 0.05,
}


def synthetic(report: Report, launches: int) -> Report:
    """`launches` rows repeating the fixture's launches, with fresh launch ids."""
    base = report.kernels
    reps = -(-launches // len(base))
    kernels = base.iloc[np.tile(np.arange(len(base)), reps)[:launches]].reset_index(drop=True)
    kernels["launch_id"] = np.arange(launches)
    return Report(
        meta=replace(report.meta, launches=launches),
        kernels=kernels,
        gpu=report.gpu,
        missing=report.missing,
    )


FILTERS = ("halo|semi", "gemm", "elementwise")  # the first is the default fixture's


def filter_text(report: Report) -> str:
    """The filter the bench types: the first of FILTERS that keeps some of the fixture's launches
    and not all (a filter keeping none leaves the cursor no row to step to), else the most launched
    kernel's name."""
    names = report.kernels["kernel"].astype(object).fillna("").astype(str)
    for text in FILTERS:
        kept = names.str.contains(text, case=False, regex=True)
        if 0 < kept.sum() < len(names):
            return text
    return re.escape(names.value_counts().index[0])


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
        """Seconds from `start` to the first frame drawn once `changed()` holds (the change is on
        screen)."""
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


def _rows(table: KernelTable) -> bool:
    """Whether the table shows rows on its lines (the first line is its header)."""
    return any(line.strip() for line in table.visible_text()[1:])


async def measure(report: Report, size: int) -> dict[str, float]:
    big = synthetic(report, size)
    start = time.perf_counter()
    app = kernels_app(report.meta.source, report=big, by="launch")
    frames = Frames(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.kernels
        table = screen.query_one(KernelTable)
        # Loaded is not yet painted: the rows reach the table's lines a refresh after its model
        # does.
        first = await frames.after(
            start, lambda: screen.model is not None and not table.loading and _rows(table)
        )
        shown = frames.times[0] - start

        table.cursor_col = [c.name for _, c, _ in table.layout_columns].index("flop_per_s")
        sort = await _key(app, frames, "s", lambda: screen.model.query.sort == "flop_per_s")

        start = time.perf_counter()
        screen._requery(parse_filter(filter_text(report), screen.query_state))
        filt = await frames.after(start, lambda: True)
        # rows left for the cursor's steps below, and fewer than all
        assert 0 < len(screen.model) < size, (
            f"filter {filter_text(report)!r} left {len(screen.model)}"
        )

        steps = []
        for _ in range(20):
            row = table.cursor_row
            steps.append(
                await _key(app, frames, "down", lambda row=row: table.cursor_row == row + 1)
            )
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


_PANES = itertools.count()


def painted_in_tmux(
    argv: list[str], env: dict[str, str], row_text: str, timeout: float = 120.0
) -> float:
    """Seconds from starting `flopscope ARGV` in a fresh tmux pane (120x40) until `row_text` is on
    its screen, polled every 10 ms: start-up, the read, the app and its first paint, as a person
    waits for them."""
    # a server of its own: one being killed refuses
    socket = f"flopscope-bench-{os.getpid()}-{next(_PANES)}"
    tmux = ["tmux", "-L", socket]
    command = shlex.join([sys.executable, "-m", "flopscope.tui.cli", *argv])
    passed = (
        a
        for k, v in env.items()
        if k.startswith(("FLOPSCOPE", "PYTHON"))
        for a in ("-e", f"{k}={v}")
    )
    try:
        start = time.perf_counter()
        subprocess.run(
            [*tmux, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", *passed, command],
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


def tmux_rows(report: Report, sizes: list[int], baseline: str | None, runs: int) -> list[dict]:
    """Median seconds to a painted table in tmux per size, for `open RUN` (the report stored in a
    temporary FLOPSCOPE_HOME) and `open FILE.csv` (a raw page of that many launches,
    bench_engine's), this checkout and `baseline` (a git revision) taking turns."""
    from bench_engine import build_raw_csv
    from bench_startup import checkout

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
        }
        # an installed flopscope has its bytecode cached
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pyc")
        env["FLOPSCOPE_HOME"] = str(Path(folder) / "home")
        versions = {"this checkout": env}
        if baseline:
            versions[baseline] = {**env, "PYTHONPATH": str(checkout(baseline, Path(folder)))}
        for version in versions.values():  # caches the bytecode
            subprocess.run(
                [sys.executable, "-c", "import flopscope.tui.app.launch"], env=version, check=True
            )
        for size in sizes:
            csv = Path(folder) / f"raw_{size}.csv"
            build_raw_csv(size, csv)
            os.environ["FLOPSCOPE_HOME"] = env["FLOPSCOPE_HOME"]
            try:
                from flopscope.core.store.run_store import Store

                with Store() as store:
                    store.save(synthetic(report, size), f"bench{size}")
            finally:
                del os.environ["FLOPSCOPE_HOME"]
            # The CSV's first open reads it (the cache off); `csv cached` is an open after one has
            # (report_cache.py).
            cases = {
                "run": ([f"bench{size}"], "compute_tendencies", {}),
                "csv": ([str(csv)], "InitializeMatrix", {"FLOPSCOPE_NO_CACHE": "1"}),
                "csv cached": ([str(csv)], "InitializeMatrix", {"FLOPSCOPE_NO_CACHE": ""}),
            }
            # the first open, which writes the cache `csv cached` reads
            for version in versions.values():
                warm = [sys.executable, "-m", "flopscope.tui.cli", "report", str(csv)]
                subprocess.run(
                    warm, env={**version, "FLOPSCOPE_NO_CACHE": ""}, check=True, capture_output=True
                )
            times: dict[tuple[str, str], list[float]] = {}
            for _ in range(runs):
                for name, version in versions.items():
                    for case, (argv, text, extra) in cases.items():
                        seconds = painted_in_tmux(["open", *argv], {**version, **extra}, text)
                        times.setdefault((case, name), []).append(seconds)
            rows.append(
                {"launches": size, **{key: statistics.median(t) for key, t in times.items()}}
            )
    return rows


async def _key(app: FlopscopeApp, frames: Frames, key: str, changed) -> float:
    await asyncio.sleep(0.05)  # let the previous frame settle so each step is timed alone
    start = time.perf_counter()
    app._driver.send_message(events.Key(key, key if len(key) == 1 else None))
    return await frames.after(start, changed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--runs", type=int, default=3, help="tmux runs per case (median)")
    parser.add_argument(
        "--baseline", metavar="REV", help="a git revision to time in tmux beside this checkout"
    )
    parser.add_argument(
        "--no-tmux", action="store_true", help="leave out the tmux table (no tmux installed)"
    )
    parser.add_argument("--no-headless", action="store_true", help="leave out the headless table")
    args = parser.parse_args()
    if not args.fixture.exists():
        raise SystemExit(
            f"fixture not found: {args.fixture} (pass --fixture PATH to an ncu report)"
        )
    report = read_report(args.fixture)
    if not args.no_tmux:
        rows = tmux_rows(report, args.sizes, args.baseline, args.runs)
        versions = ["this checkout", *([args.baseline] if args.baseline else [])]
        print(
            f"command start -> table rows on a real terminal (tmux 120x40), median of {args.runs},"
            " seconds"
        )
        print(
            f"(target {TMUX_TARGET}); `open RUN`: {args.fixture.name} stored, `open FILE.csv`:"
            " bench_engine's raw page"
        )
        cases = ("run", "csv", "csv cached")
        print(
            f"{'launches':>10}"
            + "".join(f"{f'{case} {v}':>26}" for case in cases for v in versions)
        )
        for r in rows:
            print(
                f"{r['launches']:>10,}"
                + "".join(f"{r[(case, v)]:>26.2f}" for case in cases for v in versions)
            )
    if args.no_headless:
        return
    rows = [asyncio.run(measure(report, size)) for size in args.sizes]
    print(
        f"headless (App.run_test) from a report already read: {args.fixture.name}"
        f" ({len(report.kernels)} launches"
    )
    print(f"repeated; filter {filter_text(report)!r}); times in ms, target in ()")
    titles = [
        ("launches", 10),
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
            *(
                _cell(r, name, TARGETS[name] if n <= 100_000 else None)
                for name in ("sort", "filter", "regroup")
            ),
            _cell(r, "cursor", TARGETS["cursor"]),
        ]
        print(f"{n:>10,} {1000 * r['screen']:7.0f} " + " ".join(cells))


def _cell(row: dict, name: str, target: float | None) -> str:
    width = 18 if name == "first paint" else (10 if name == "cursor" else 12)
    text = f"{1000 * row[name]:.0f}" + (f" ({1000 * target:.0f})" if target else "")
    return f"{text:>{width}}"


if __name__ == "__main__":
    main()
