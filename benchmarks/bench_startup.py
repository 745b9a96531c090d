"""Start-up time of the flopscope command: whole processes, median of several runs (issue 18.4:
`--version` and `gpus` within 0.3 s).

    python benchmarks/bench_startup.py [--runs 7] [--baseline REV]

--baseline REV times the same commands from a git revision of this repository too (unpacked into a
temporary folder with `git archive` and imported ahead of the installed checkout), side by side.
Bytecode is cached in a temporary folder and each command runs once before timing, as an installed
flopscope runs (this machine's PYTHONDONTWRITEBYTECODE would otherwise compile every module on every
start)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [
    ["--version"],
    ["--help"],
    ["gpus"],
    ["gpus", "--json"],
    ["report", "--help"],
    ["report", "--bogus"],
]


def checkout(rev: str, folder: Path) -> Path:
    """`rev` laid out as the import path reads (flopscope/ holding core/ and tui/), for
    PYTHONPATH."""
    tree = folder / "tree"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    pkg = folder / "path" / "flopscope"
    pkg.mkdir(parents=True)
    shutil.copy(tree / "flopscope_pkg" / "__init__.py", pkg / "__init__.py")
    for layer in ("core", "tui"):
        (pkg / layer).symlink_to(tree / layer, target_is_directory=True)
    return folder / "path"


def median_s(argv: list[str], env: dict[str, str], runs: int) -> float:
    command = [sys.executable, "-m", "flopscope.tui.cli", *argv]
    subprocess.run(command, env=env, capture_output=True)  # writes the bytecode cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--baseline", metavar="REV", help="a git revision to time beside this checkout"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
        }
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pyc")
        envs = {"this checkout": env}
        if args.baseline:
            envs[args.baseline] = {**env, "PYTHONPATH": str(checkout(args.baseline, Path(folder)))}
        python = statistics.median(_bare_python(env) for _ in range(args.runs))
        print(
            f"whole-process medians of {args.runs} runs, seconds (bare `python -c pass`:"
            f" {python:.3f})"
        )
        print(f"{'command':<22}" + "".join(f"{name:>16}" for name in envs))
        for argv in COMMANDS:
            cells = "".join(f"{median_s(argv, e, args.runs):>16.3f}" for e in envs.values())
            print(f"{' '.join(argv):<22}{cells}")


def _bare_python(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
