"""The app's first paint from the command's start (issue 44): `flopscope demo` and `flopscope open
FILE` for every real report in ../shared/fixtures/ncu, cold (no cache entry) and warm (the entry an
earlier open wrote), this checkout beside a baseline revision.

    python benchmarks/bench_app_start.py [--runs 5] [--baseline REV] [--frozen REV]
        [--only TEXT ...] [--show FILE]

Each run starts the real `flopscope` console script in a pseudo-terminal of 120x40
(TERM=xterm-256color), as a terminal would: the clock starts just before the fork that execs it and
stops at the read that brings the frame holding the Kernels screen's status line (`N/N rows · by`).
The screen draws that line in the same call as the table's rows, the header and the details
(`KernelsScreen._show`), so it is the first frame with the table; `--show FILE` replays the bytes up
to that read into a tmux pane and prints what a terminal shows there, to check. Then `q`.

Cold: a fresh FLOPSCOPE_HOME per run (the read writes its cache entry, as a first open does); warm:
one home per version, opened once untimed first. Bytecode is cached for both versions first, as an
installed flopscope has it. Runs take turns (file by file, version by version, cold then warm) and
each cell is a median of --runs: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from bench_startup import checkout

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"
SIZE = (120, 40)  # columns, rows: bench_tui's terminal
TARGETS = {"warm": 1.0, "cold": 1.5}  # issue 44, seconds from the command's start
# the status line of a shown table; escape sequences are taken out of the stream first
PAINTED = re.compile(rb"\d[\d,]*/[\d,]+ rows \xc2\xb7 by ")
ESCAPES = re.compile(
    rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[P^_][^\x1b]*\x1b\\|.)"
)


def cases() -> list[tuple[str, list[str]]]:
    """(name, argv) per report: the demo, then every real ncu output in the fixtures."""
    files = sorted(p for p in FIXTURES.iterdir() if p.name != "SOURCES.md")
    return [("demo", ["demo"]), *((p.name, ["open", str(p)]) for p in files)]


def first_paint(
    argv: list[str], env: dict[str, str], timeout: float = 60.0
) -> tuple[float, float, bytes]:
    """Seconds from starting `flopscope ARGV` in a pseudo-terminal to the read that brings the
    table's status line, the CPU seconds its processes had used by then, and the bytes written up to
    that read."""
    command = str(Path(sys.executable).parent / "flopscope")
    start = time.perf_counter()
    pid, fd = os.forkpty()
    if pid == 0:  # the child: the terminal's size first, as a terminal has it before the program
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        os.execve(command, [command, *argv], env)
    stream = b""
    try:
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"{argv}: no table after {timeout:.0f} s")
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:  # the command ended (EIO)
                chunk = b""
            if not chunk:
                raise RuntimeError(f"{argv} ended before a table: {stream[-400:]!r}")
            stream += chunk
            if PAINTED.search(ESCAPES.sub(b"", stream[-(1 << 16) - len(chunk) :])):
                seconds = time.perf_counter() - start
                cpu = cpu_seconds(pid)
                break
        os.write(fd, b"q")
        _drain(fd, pid)
        return seconds, cpu, stream
    finally:
        os.close(fd)


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system, every thread) the process `pid` and its descendants have used so
    far: the command's process and its worker. On a loaded machine this holds still where the wall
    clock does not; /proc counts in clock ticks (10 ms)."""
    total, todo = 0, [pid]
    while todo:
        at = todo.pop()
        try:
            fields = Path(f"/proc/{at}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{at}/task/{at}/children").read_text().split()
        except OSError:  # ended meanwhile
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        todo += [int(c) for c in children]
    return total / os.sysconf("SC_CLK_TCK")


def _drain(fd: int, pid: int, timeout: float = 10.0) -> None:
    """Read the terminal until the command has quit (it must not block writing its last frames)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                if os.read(fd, 1 << 16):
                    continue
            except OSError:
                pass
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
    os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def show(stream: bytes) -> str:
    """What a terminal of SIZE shows after `stream` (tmux replays it)."""
    with tempfile.NamedTemporaryFile(suffix=".bytes") as raw:
        raw.write(stream)
        raw.flush()
        tmux = ["tmux", "-L", f"bench-app-start-{os.getpid()}"]
        replay = f"cat {raw.name}; sleep 60"
        width, height = SIZE
        subprocess.run(
            [*tmux, "new-session", "-d", "-x", str(width), "-y", str(height), replay], check=True
        )
        try:
            time.sleep(0.5)
            return subprocess.run(
                [*tmux, "capture-pane", "-p"], capture_output=True, text=True, check=True
            ).stdout
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)


def environment(
    folder: Path, baseline: str | None, frozen: str | None = None
) -> dict[str, dict[str, str]]:
    """The environment of each version: its import path, bytecode cached in `folder`. `frozen`:
    that revision in place of the working checkout, whose edits (others' too) would otherwise change
    the code mid-run, and with it the cache key of every warm run (table_cache.engine_code)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "FLOPSCOPE_NO_CACHE")
        and not k.startswith("FLOPSCOPE_HOME")
    }
    env |= {"TERM": "xterm-256color", "PYTHONPYCACHEPREFIX": str(folder / "pyc")}
    env.pop("COLORTERM", None)
    versions = {}
    for rev, place in ((frozen, "this"), (baseline, "baseline")):
        if rev:
            (folder / place).mkdir()
            versions[rev] = {**env, "PYTHONPATH": str(checkout(rev, folder / place))}
        elif place == "this":
            versions["this checkout"] = env
    for version in versions.values():  # caches the bytecode of what the app imports
        subprocess.run(
            [sys.executable, "-c", "import flopscope.tui.cli.view, flopscope.tui.app.launch"],
            env=version,
            check=True,
        )
    return versions


def measure(files, versions, runs: int, folder: Path) -> dict[tuple[str, str, str], list[float]]:
    """Seconds per (file, version, cold or warm), runs taking turns."""
    homes = {name: folder / f"home-{i}" for i, name in enumerate(versions)}
    for _, argv in files:  # the warm runs' cache entries
        for name, env in versions.items():
            first_paint(argv, {**env, "FLOPSCOPE_HOME": str(homes[name])})
    times: dict[tuple[str, str, str], list[float]] = {}
    cold = 0
    for _ in range(runs):
        for label, argv in files:
            for name, env in versions.items():
                cold += 1
                fresh = {**env, "FLOPSCOPE_HOME": str(folder / f"cold-{cold}")}
                warm = {**env, "FLOPSCOPE_HOME": str(homes[name])}
                for mode, run_env in (("cold", fresh), ("warm", warm)):
                    seconds, cpu, _ = first_paint(argv, run_env)
                    times.setdefault((label, name, mode), []).append(seconds)
                    times.setdefault((label, name, f"{mode} cpu"), []).append(cpu)
    return times


def print_table(files, versions, times, runs: int) -> None:
    """Two tables: wall-clock seconds (the targets') and the CPU seconds used by then."""
    names = list(versions)
    medians = {key: statistics.median(t) for key, t in times.items()}
    for what, suffix in (("wall-clock", ""), ("CPU (command and worker, all threads)", " cpu")):
        print(
            f"\ncommand start -> first frame with the table (pty {SIZE[0]}x{SIZE[1]}), {what}"
            f" seconds, median of {runs} runs"
            + (
                f"; * over the target (warm {TARGETS['warm']}, cold {TARGETS['cold']})"
                if not suffix
                else ""
            )
        )
        heads = [f"{mode} {name}"[:21] for mode in ("cold", "warm") for name in names]
        print(f"{'report':<44}" + "".join(f"{h:>22}" for h in heads))
        for label in [*(f for f, _ in files), "median over reports"]:
            cells = []
            for mode in ("cold", "warm"):
                for name in names:
                    if label == "median over reports":
                        value = statistics.median(
                            medians[(f, name, mode + suffix)] for f, _ in files
                        )
                    else:
                        value = medians[(label, name, mode + suffix)]
                    over = "*" if not suffix and value > TARGETS[mode] else " "
                    cells.append(f"{value:>21.2f}{over}")
            print(f"{label[:43]:<44}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline", metavar="REV", help="a git revision to time beside this checkout"
    )
    parser.add_argument(
        "--frozen",
        metavar="REV",
        help="time this git revision in place of the working checkout (others may be editing it)",
    )
    parser.add_argument(
        "--only", nargs="+", metavar="TEXT", help="only the reports whose name holds TEXT"
    )
    parser.add_argument(
        "--show", metavar="FILE", help="print the screen at the stop for FILE (or `demo`)"
    )
    args = parser.parse_args()
    if not FIXTURES.is_dir():
        raise SystemExit(f"no fixtures at {FIXTURES}: the real ncu outputs sit beside the clone")
    files = cases()
    if args.only:
        files = [(label, argv) for label, argv in files if any(t in label for t in args.only)]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        versions = environment(folder, args.baseline, args.frozen)
        if args.show:
            argv = ["demo"] if args.show == "demo" else ["open", args.show]
            env = {**next(iter(versions.values())), "FLOPSCOPE_HOME": str(folder / "show")}
            seconds, cpu, stream = first_paint(argv, env)
            print(f"{seconds:.2f} s ({cpu:.2f} s CPU)\n{show(stream)}")
            return
        load = os.getloadavg()[0]
        times = measure(files, versions, args.runs, folder)
        print(
            f"load average (1 min) at the start {load:.1f}, at the end {os.getloadavg()[0]:.1f},"
            f" on {os.cpu_count()} CPUs: above ~1, the wall clock counts other processes' turns"
        )
        print_table(files, versions, times, args.runs)


if __name__ == "__main__":
    main()
