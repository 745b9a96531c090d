"""The reports users open every day, side by side with NVIDIA's own CLI (issue 44): per file, the
median time of `ncu --import FILE --csv --page raw`, of `flopscope report FILE` opened first (no
cache entry: `--no-cache`) and opened again (caches warm), and their ratios to ncu's.

    python benchmarks/bench_everyday.py [--runs 5] [--baseline REV] [--ncu PATH]

The files: the bundled demo (unpacked: ncu reads no .xz) and every .ncu-rep in
../shared/fixtures/ncu. The commands run pair by pair (ncu, then flopscope's, then the next run), so
a machine that slows down slows both. ncu: --ncu, else $FLOPSCOPE_REAL_NCU (.ci/fetch_ncu.sh
unpacks one), else `ncu` on PATH. --baseline REV times a git revision's flopscope too (laid out as
bench_startup.py does), in its own columns. Bytecode is cached in a temporary folder, as an
installed flopscope has it. Run it on a quiet checkout: an edited source file changes the output
cache's key."""

from __future__ import annotations

import argparse
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_startup import checkout

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "ncu"


def reports(folder: Path) -> list[Path]:
    """The demo (unpacked into `folder`: ncu reads no .xz) and the fixtures' .ncu-rep files."""
    demo = next((ROOT / "tui" / "examples").glob("*.ncu-rep.xz"))
    unpacked = folder / demo.name.removesuffix(".xz")
    unpacked.write_bytes(lzma.decompress(demo.read_bytes()))
    return [unpacked, *sorted(FIXTURES.glob("*.ncu-rep"))]


def seconds(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode})")
    return took


def flopscope(env: dict[str, str], *args: str) -> list[str]:
    return [sys.executable, "-m", "flopscope.tui.cli", "report", *args]


def time_file(
    report: Path, ncu: str, envs: dict[str, dict[str, str]], runs: int
) -> dict[str, float]:
    """Medians per column for one report: ncu, then per flopscope (this checkout, a baseline) its
    first open and its open again."""
    ncu_cmd = [ncu, "--import", str(report), "--csv", "--page", "raw"]
    columns: dict[str, list[float]] = {"ncu": []}
    for env in envs.values():  # warm the caches and the bytecode
        seconds(flopscope(env, str(report)), env)
        seconds(flopscope(env, str(report), "--no-cache"), env)
    for _ in range(runs):
        columns["ncu"].append(seconds(ncu_cmd, envs["this checkout"]))
        for name, env in envs.items():
            first = seconds(flopscope(env, str(report), "--no-cache"), env)
            again = seconds(flopscope(env, str(report)), env)
            columns.setdefault(f"{name}: first", []).append(first)
            columns.setdefault(f"{name}: again", []).append(again)
    return {name: statistics.median(times) for name, times in columns.items()}


def table(rows: dict[str, dict[str, float]]) -> None:
    names = list(next(iter(rows.values())))
    head = f"{'report':<44}" + "".join(f"{n:>22}" for n in names)
    print(
        head
        + "".join(
            f"{'/ncu ' + n.split(': ')[-1] + ' (' + n.split(':')[0][:8] + ')':>24}"
            for n in names[1:]
        )
    )
    ratios: dict[str, list[float]] = {n: [] for n in names[1:]}
    for report, cells in rows.items():
        line = f"{report[:43]:<44}" + "".join(f"{cells[n]:>22.3f}" for n in names)
        for n in names[1:]:
            ratios[n].append(cells[n] / cells["ncu"])
            line += f"{cells[n] / cells['ncu']:>23.2f}x"
        print(line)
    print()
    for n, values in ratios.items():
        print(
            f"{n:<36} / ncu: median {statistics.median(values):.2f}x,"
            f" best {min(values):.2f}x, worst {max(values):.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline", metavar="REV", help="a git revision to time beside this checkout"
    )
    parser.add_argument("--ncu", help="the ncu binary (default: $FLOPSCOPE_REAL_NCU, else PATH's)")
    args = parser.parse_args()
    ncu = args.ncu or os.environ.get("FLOPSCOPE_REAL_NCU") or shutil.which("ncu")
    if not ncu:
        raise SystemExit("no ncu: pass --ncu PATH or set FLOPSCOPE_REAL_NCU (.ci/fetch_ncu.sh)")
    with tempfile.TemporaryDirectory() as folder:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
        }
        env.update(
            PYTHONPYCACHEPREFIX=str(Path(folder) / "pyc"), FLOPSCOPE_HOME=str(Path(folder) / "home")
        )
        env.pop("FLOPSCOPE_NO_CACHE", None)
        envs = {"this checkout": env}
        if args.baseline:
            base_home = str(Path(folder) / "base-home")
            path = str(checkout(args.baseline, Path(folder)))
            envs[args.baseline[:12]] = {**env, "PYTHONPATH": path, "FLOPSCOPE_HOME": base_home}
        print(f"medians of {args.runs} runs, seconds; ncu: {ncu}")
        rows = {p.name: time_file(p, ncu, envs, args.runs) for p in reports(Path(folder))}
        table(rows)


if __name__ == "__main__":
    main()
