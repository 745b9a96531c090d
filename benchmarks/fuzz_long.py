"""The long fuzz run: many more damaged inputs than CI runs (tests/core/test_fuzz.py). Case I of
seed S is the real fixture, mutation, compression and command that `random.Random(f"{S}:{I}")` draws
(tests/helpers/ fuzz_cases.py builds it), so `--seed S --only I,J` replays those. Each case runs in
a forked process (the engine and Textual imported once, before forking): a hang is killed, a crash
is its own, and its peak memory is measured alone. Commands: `report`, `report --json`, `export`
(CSV, JSON, Parquet), `open --no-tui` and the app's first screen (the Kernels screen, driven
headless by Textual's run_test until its table fills or the app exits 2).

Prints a table of outcomes by input format x command (ok: exit 0 with a sane table; refused: exit 2
with one line naming the file; traceback; broke another rule; hang; crash), the worst time and the
worst peak memory over the forked process's start, against the input's useful size (its bytes once
decompressed). The children import some modules only when a command needs them: in a checkout others
are editing, run it from a frozen copy (`git archive HEAD | tar -x -C DIR`), or a half-made edit
there reads as the engine's traceback.

    python benchmarks/fuzz_long.py [--cases 10000] [--first 0] [--seed 0] [--workers 2] [--timeout
    60] [--max-size B]
"""

from __future__ import annotations

import argparse
import asyncio
import bz2
import collections
import contextlib
import gzip
import json
import lzma
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import fuzz_cases

COMMANDS = [*fuzz_cases.COMMANDS, "app"]
OUTCOMES = ["ok", "refused", "traceback", "rule", "hang", "crash"]
EXIT = {"ok": 0, "refused": 2, "traceback": 3, "rule": 4, "hang": 5}
# inputs of the cases that broke the rule, to replay
KEPT = Path(tempfile.gettempdir()) / "flopscope-fuzz-kept"


def main() -> int:
    args = _arguments()
    if args.table:
        return _table_of(args.table)
    sources = [s for s in fuzz_cases.SOURCES if len(fuzz_cases._plain_bytes(s)) <= args.max_size]
    if not sources:
        sys.exit("no fixtures: ../shared/fixtures/ncu is missing")
    fuzz_cases.SOURCES[:] = sources  # build() draws from this list: the smaller real fixtures only
    tmp = Path(tempfile.mkdtemp(prefix="flopscope-fuzz-"))
    os.environ.update(FLOPSCOPE_HOME=str(tmp / "home"), FLOPSCOPE_FIFO_WAIT="0.3", NO_COLOR="1")
    _warm_up(tmp)
    baseline = _baseline_rss()
    cases = (
        [int(i) for i in args.only.split(",")]
        if args.only
        else range(args.first, args.first + args.cases)
    )
    start = time.monotonic()
    results = _run_all(cases, args, tmp, baseline)
    total = time.monotonic() - start
    shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"cases: {len(results)} in {total:.0f} s on {args.workers} workers (seed {args.seed});"
        f" {_counts(results)}"
    )
    print(f"sources: {len(sources)} real fixtures of at most {args.max_size:,} bytes decompressed")
    _print_table(results)
    return 0 if all(r["outcome"] in ("ok", "refused") for r in results) else 1


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument(
        "--first", type=int, default=0, help="index of the first case (a run continued)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only", default=None, help="replay these cases of the seed (comma-separated indexes)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="cases run at once, each in its own process"
    )
    parser.add_argument(
        "--timeout", type=int, default=60, help="seconds one case may take: past it, a hang"
    )
    parser.add_argument(
        "--max-size", type=int, default=1_000_000, help="skip fixtures larger (decompressed)"
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="also append each case's result here (JSON lines)",
    )
    parser.add_argument(
        "--table", type=Path, nargs="+", help="run nothing: the table of these --results files"
    )
    return parser.parse_args()


def _warm_up(tmp: Path) -> None:
    """Import what every command and the app import, once, so each forked case starts with them
    loaded."""
    import pyarrow.csv
    import pyarrow.parquet  # noqa: F401
    from flopscope.tui.app.launch import kernels_app  # noqa: F401
    from flopscope.tui.cli.main import main as cli  # noqa: F401

    folder = tmp / "warm"
    folder.mkdir()
    for command in fuzz_cases.COMMANDS:
        pid = os.fork()  # run in a child: the parent keeps no cache or state of a read
        if pid == 0:
            case = fuzz_cases.Case("-", "none", "none", command, fuzz_cases.SOURCES[0])
            with contextlib.redirect_stdout(open(os.devnull, "w")):
                fuzz_cases.run(case, folder)
            os._exit(0)
        os.waitpid(pid, 0)


def _baseline_rss() -> float:
    """A forked process's peak RSS (MB) before it does anything: the parent's resident pages it
    inherits."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss / 1024


def _run_all(cases, args, tmp: Path, baseline: float) -> list[dict]:
    """Every case, `args.workers` at a time, each in a forked child; a child past the timeout is
    killed."""
    todo = list(cases)
    running: dict[int, tuple[int, float, Path]] = {}
    results: list[dict] = []
    log = tmp.parent / f"flopscope-fuzz-{args.seed}-broken.txt"
    while todo or running:
        while todo and len(running) < args.workers:
            index = todo.pop(0)
            folder = tmp / f"case{index}"
            folder.mkdir()
            pid = os.fork()
            if pid == 0:
                os._exit(_child(index, folder, args))
            running[pid] = (index, time.monotonic(), folder)
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            _kill_late(running, args.timeout + 15)
            time.sleep(0.01)
            continue
        index, began, folder = running.pop(pid)
        result = _result(index, folder, os.waitstatus_to_exitcode(status), time.monotonic() - began)
        result["growth_mb"] = max(0.0, usage.ru_maxrss / 1024 - baseline)
        result["baseline_mb"] = baseline
        results.append(result)
        if args.results:
            with args.results.open("a") as out:
                out.write(json.dumps(result) + "\n")
        if result["outcome"] not in ("ok", "refused"):
            _keep(result, folder, log, args.seed)
        shutil.rmtree(folder, ignore_errors=True)
        if len(results) % 500 == 0:
            print(f"{len(results)} cases, {_counts(results)}", file=sys.stderr, flush=True)
    return results


def _kill_late(running: dict[int, tuple[int, float, Path]], limit_s: float) -> None:
    """A case still running past its limit (its own alarm did not fire: stuck in native code) is
    killed."""
    for pid, (_, began, folder) in running.items():
        if time.monotonic() - began > limit_s and not (folder / "killed").exists():
            (folder / "killed").touch()
            os.kill(pid, signal.SIGKILL)


def _child(index: int, folder: Path, args) -> int:
    """Build case `index`, run it; the outcome as the exit status, what happened in
    folder/case.json."""
    rng = random.Random(f"{args.seed}:{index}")
    case = fuzz_cases.build(rng, folder)
    case.command = rng.choice(COMMANDS)
    meta = {
        "index": index,
        "source": case.source,
        "kind": case.kind,
        "wrap": case.wrap,
        "command": case.command,
    }
    meta["format"] = _format(case)
    meta["useful_bytes"] = len(_unpacked(case.path.read_bytes()))
    (folder / "case.json").write_text(json.dumps(meta))
    err = os.open(folder / "stderr.txt", os.O_WRONLY | os.O_CREAT)
    # what reaches the real stderr (a native library's or Textual's print) is checked too
    os.dup2(err, 2)
    outcome = "rule"
    try:
        code = (
            _run_app(case, args.timeout)
            if case.command == "app"
            else fuzz_cases.run(case, folder, args.timeout)[0]
        )
        outcome = {0: "ok", 2: "refused"}.get(code, "rule")
    except fuzz_cases.Hang:
        outcome = "hang"
    # the rule broken: a traceback printed, or another check (NaN shown, ...)
    except AssertionError as exc:
        outcome = "traceback" if "Traceback" in str(exc) else "rule"
        (folder / "why.txt").write_text(traceback.format_exc()[-4000:])
    except BaseException:
        outcome = "traceback"
        (folder / "why.txt").write_text(traceback.format_exc()[-4000:])
    sys.stderr.flush()
    if outcome in ("ok", "refused") and "Traceback" in (folder / "stderr.txt").read_text(
        errors="replace"
    ):
        outcome = "traceback"
    return EXIT[outcome]


def _run_app(case: fuzz_cases.Case, limit_s: int) -> int:
    """The app's first screen on the case: 0 once the Kernels table has filled, 2 when the app exits
    with the CLI's one line (the read refused the file)."""
    from flopscope.tui.app.launch import kernels_app
    from flopscope.tui.app.widgets.kernel_table import KernelTable

    async def drive() -> int:
        app = kernels_app(case.path)
        async with app.run_test(size=(120, 40)) as pilot:
            while True:
                if app.return_code is not None:
                    return app.return_code
                screen = app.kernels
                if screen.model is not None and not screen.query_one(KernelTable).loading:
                    await pilot.pause()
                    return 0
                await pilot.pause(0.02)

    def alarm(signum, frame):
        raise fuzz_cases.Hang(f"{case} took over {limit_s} s")

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(limit_s)
    try:
        return asyncio.run(drive())
    finally:
        signal.alarm(0)


def _format(case: fuzz_cases.Case) -> str:
    """What the case's input is at heart (raw CSV, details CSV or log, .ncu-rep) and how it is
    wrapped."""
    source = fuzz_cases._plain_bytes(next(s for s in fuzz_cases.SOURCES if s.name == case.source))
    if source.startswith(b"NVR\x00"):
        kind = "ncu-rep"
    else:
        kind = "details csv" if b'"Metric Name"' in source[:65536] else "raw csv"
    return kind + {"none": "", "garbage_after_magic": " +garbage"}.get(case.wrap, f".{case.wrap}")


def _unpacked(data: bytes) -> bytes:
    for magic, unpack in (
        (b"\x1f\x8b", gzip.decompress),
        (b"\xfd7zX", lzma.decompress),
        (b"BZh", bz2.decompress),
    ):
        if data.startswith(magic):
            try:
                return unpack(data)
            except Exception:
                return data
    return data


def _result(index: int, folder: Path, code: int, seconds: float) -> dict:
    meta_path = folder / "case.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"index": index}
    meta.setdefault("format", "?")
    meta.setdefault("command", "?")
    meta.setdefault("useful_bytes", 0)
    if (folder / "killed").exists():
        outcome = "hang"
    elif code < 0 or code not in EXIT.values():
        outcome = "crash"
    else:
        outcome = {v: k for k, v in EXIT.items()}[code]
    meta.update(outcome=outcome, seconds=seconds, code=code)
    why = folder / "why.txt"
    meta["why"] = why.read_text()[-2000:] if why.exists() else ""
    stderr = folder / "stderr.txt"
    meta["stderr"] = stderr.read_text(errors="replace")[-2000:] if stderr.exists() else ""
    return meta


def _keep(result: dict, folder: Path, log: Path, seed: int) -> None:
    KEPT.mkdir(exist_ok=True)
    inputs = [p for p in folder.glob("case.*") if p.name != "case.json"]
    kept = KEPT / f"seed{seed}-case{result['index']}{inputs[0].suffix if inputs else ''}"
    if inputs:
        shutil.copyfile(inputs[0], kept)
    with log.open("a") as out:
        out.write(
            f"--- {result['outcome']}: case {result['index']} ({_short(result)}), input kept as"
            f" {kept}\n"
        )
        out.write(result["why"] + result["stderr"] + "\n")


def _baseline(result: dict) -> str:
    return f" ({result['baseline_mb']:.0f} MB)" if "baseline_mb" in result else ""


def _counts(results: list[dict]) -> str:
    counts = collections.Counter(r["outcome"] for r in results)
    return ", ".join(f"{k} {counts[k]}" for k in OUTCOMES if counts[k])


def _short(r: dict) -> str:
    return f"{r.get('source')} {r.get('kind')}/{r.get('wrap')} via {r.get('command')}"


def _table_of(files: list[Path]) -> int:
    """The table of runs' --results files (a run and its continuation): a case's last result
    counts."""
    by_case = {}
    for path in files:
        for line in path.read_text().splitlines():
            result = json.loads(line)
            by_case[result["index"]] = result
    results = [by_case[k] for k in sorted(by_case)]
    print(
        f"cases: {len(results)} (indexes {results[0]['index']} to {results[-1]['index']});"
        f" {_counts(results)}"
    )
    _print_table(results)
    return 0 if all(r["outcome"] in ("ok", "refused") for r in results) else 1


def _print_table(results: list[dict]) -> None:
    print()
    print(
        "| format | command | cases | ok | refused | traceback | rule | hang | crash | worst s |"
        " worst MB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    cells: dict[tuple[str, str], list[dict]] = collections.defaultdict(list)
    for r in results:
        cells[(r["format"], r["command"])].append(r)
    for (fmt, command), rs in sorted(cells.items()):
        n = collections.Counter(r["outcome"] for r in rs)
        worst_s = max(r["seconds"] for r in rs)
        worst_mb = max(r["growth_mb"] for r in rs)
        counts = " | ".join(str(n[k]) for k in OUTCOMES)
        print(f"| {fmt} | {command} | {len(rs)} | {counts} | {worst_s:.1f} | {worst_mb:.0f} |")
    n = collections.Counter(r["outcome"] for r in results)
    worst_s, worst_mb = max(r["seconds"] for r in results), max(r["growth_mb"] for r in results)
    counts = " | ".join(str(n[k]) for k in OUTCOMES)
    print(f"| **all** | | {len(results)} | {counts} | {worst_s:.1f} | {worst_mb:.0f} |")
    print()
    slow = max(results, key=lambda r: r["seconds"])
    print(f"worst time: {slow['seconds']:.1f} s (case {slow['index']}: {_short(slow)})")
    big = max(results, key=lambda r: r["growth_mb"])
    largest = max(r["useful_bytes"] for r in results) / 1e6
    print(
        f"worst peak memory over a forked case's start{_baseline(big)}: {big['growth_mb']:.0f} MB"
        f" (case {big['index']}: {_short(big)}, useful size {big['useful_bytes'] / 1e6:.2f} MB);"
        f" largest input's useful size {largest:.2f} MB, 4x that {4 * largest:.1f} MB"
    )
    for r in results:
        if r["outcome"] not in ("ok", "refused"):
            print(
                f"\n--- {r['outcome']}: case {r['index']} ({_short(r)},"
                f" {r['format']})\n{r['why']}{r['stderr']}"
            )


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
