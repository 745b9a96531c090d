"""Issue 38: what hostile inputs built from real ncu files cost `flopscope report FILE --no-cache`:
wall time, peak RSS (`/usr/bin/time -v`), the most bytes $TMPDIR held (sampled every 20 ms) and the
exit code.

    python benchmarks/bench_hostile_inputs.py [--runs 3] [--only NAME] [--timeout 90]

Inputs (built once in a temporary folder, from the H100 capture's raw CSV and the bundled demo
report):
  csv-zeros-end     the raw CSV followed by 256 MiB of zero bytes
  csv-zeros-middle  the raw CSV with 64 MiB of zero bytes after its 40th line
  csv-sparse-2g     the raw CSV, then `truncate -s 2G` (holes: ~1 MB on disk)
  holes-2g          a 2 GiB file of holes only
  rep-xz-zeros      the demo .ncu-rep followed by 2 GiB of zeros, xz (concatenated streams)
  gz-bomb-a         gzip of the raw CSV's header followed by 4 GiB of `a`
  gz-bomb-rows      gzip of the raw CSV's header and units row, then its first row repeated to 4 GiB
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import lzma
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "tests/data/gpu/nvidia_h100_80gb_hbm3/train_transformer_bf16_bs8.csv.gz"
DEMO = ROOT / "tui/examples/train_transformer_bf16_bs8.ncu-rep.xz"
MIB = 1 << 20


def _gzip_repeated(path: Path, head: bytes, unit: bytes, total: int) -> None:
    """`head`, then `unit` repeated to `total` bytes, as concatenated gzip members (gzip reads them
    as one)."""
    member = gzip.compress(unit * max(1, (16 * MIB) // len(unit)), 9)
    per = len(unit) * max(1, (16 * MIB) // len(unit))
    with path.open("wb") as out:
        out.write(gzip.compress(head, 9))
        for _ in range(total // per):
            out.write(member)


def build(folder: Path) -> dict[str, Path]:
    raw = gzip.decompress(CSV.read_bytes())
    lines = raw.split(b"\n")
    made: dict[str, Path] = {}

    def write(name: str, *parts: bytes) -> Path:
        path = folder / name
        with path.open("wb") as out:
            for part in parts:
                out.write(part)
        made[name] = path
        return path

    write("csv-zeros-end.csv", raw, b"\0" * (256 * MIB))
    write(
        "csv-zeros-middle.csv",
        b"\n".join(lines[:40]) + b"\n",
        b"\0" * (64 * MIB),
        b"\n".join(lines[40:]),
    )
    os.truncate(write("csv-sparse-2g.csv", raw), 2 << 30)
    os.truncate(write("holes-2g.csv"), 2 << 30)
    report = lzma.decompress(DEMO.read_bytes())
    zeros = lzma.compress(b"\0" * (64 * MIB))
    write("rep-xz-zeros.ncu-rep.xz", lzma.compress(report), *([zeros] * 32))
    header = raw[: raw.index(b'"ID","')]
    start = len(header)
    header_end = raw.index(b"\n", start) + 1
    units_end = raw.index(b"\n", header_end) + 1
    row_end = raw.index(b"\n", units_end) + 1
    made["gz-bomb-a.csv.gz"] = folder / "gz-bomb-a.csv.gz"
    _gzip_repeated(made["gz-bomb-a.csv.gz"], raw[:header_end], b"a" * MIB, 4 << 30)
    made["gz-bomb-rows.csv.gz"] = folder / "gz-bomb-rows.csv.gz"
    _gzip_repeated(made["gz-bomb-rows.csv.gz"], raw[:units_end], raw[units_end:row_end], 4 << 30)
    return made


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # removed as it is read
                total += os.stat(os.path.join(root, name)).st_blocks * 512
    return total


def run_one(path: Path, timeout: float) -> tuple[float, int, int, int, str]:
    """(wall s, max RSS KiB, peak $TMPDIR bytes, exit code, stderr's last line)."""
    temp = Path(tempfile.mkdtemp(prefix="bench-tmp-"))
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _folder_bytes(temp))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    home = Path(tempfile.mkdtemp(prefix="bench-home-"))
    env = {**os.environ, "TMPDIR": str(temp), "FLOPSCOPE_HOME": str(home)}
    cmd = [
        "/usr/bin/time",
        "-v",
        sys.executable,
        "-m",
        "flopscope.tui.cli",
        "report",
        str(path),
        "--no-cache",
    ]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        code, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, err = (
            124,
            ((exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else ""),
        )
    wall = time.monotonic() - start
    stop.set()
    sampler.join()
    shutil.rmtree(temp, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    said = [ln for ln in err.splitlines() if ln.startswith("flopscope:")]
    return wall, int(rss.group(1)) if rss else -1, peak[0], code, (said[-1] if said else "")[:160]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=float, default=90)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        made = build(Path(folder))
        print(
            "| input | on disk | wall s (median) | max RSS MiB | peak $TMPDIR MiB | exit | says |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, path in made.items():
            if args.only and args.only not in name:
                continue
            runs = [run_one(path, args.timeout) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            rss = statistics.median(r[1] for r in runs) / 1024
            temp = max(r[2] for r in runs) / MIB
            disk = os.stat(path).st_blocks * 512 / MIB
            print(
                f"| {name} | {disk:.1f} MiB | {wall:.2f} | {rss:.0f} | {temp:.0f} | {runs[-1][3]} |"
                f" {runs[-1][4]} |"
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
