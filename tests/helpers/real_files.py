"""Every real ncu file the project holds: the shared fixtures, the GPU captures (H100, H200) and the
bundled demo."""

from __future__ import annotations

import csv
import gzip
import os
import sys
from functools import cache
from pathlib import Path

from flopscope.core import read_report

from ..conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
GPU_DATA = ROOT / "tests" / "data" / "gpu"
H100 = GPU_DATA / "nvidia_h100_80gb_hbm3"
DEMO = ROOT / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"

# An xz report unpacked for NVIDIA's ncu_report, which reads a plain file: the benchmarks' helper,
# one for both.
sys.path.insert(0, str(ROOT / "benchmarks"))
from make_big_report import plain_copy as plain_copy  # noqa: E402


def real_files() -> list[Path]:
    shared = (
        sorted(p for p in FIXTURES.glob("*") if p.suffix in {".ncu-rep", ".csv", ".log"})
        if FIXTURES.is_dir()
        else []
    )
    return [
        *shared,
        *sorted(GPU_DATA.glob("*/*.ncu-rep.xz")),
        *sorted(GPU_DATA.glob("*/*.csv.gz")),
        DEMO,
    ]


def one_of_each_kind(paths: list[Path]) -> list[Path]:
    """The first file of each kind the readers take (.ncu-rep, raw CSV, details CSV, console log,
    compressed), or every one with FLOPSCOPE_EVERY_FILE=1: for checks that go through the same code
    for every file of a kind, each run as a fresh interpreter."""
    if os.environ.get("FLOPSCOPE_EVERY_FILE") == "1":
        return list(paths)
    kinds: dict[str, Path] = {}
    for path in paths:
        details = "details" if "details" in path.name else ""
        kind = "compressed" if path.suffix in {".gz", ".xz"} else path.suffix + details
        kinds.setdefault(kind, path)
    return list(kinds.values())


def file_id(path: Path) -> str:
    """A test id for a real file: a capture's GPU folder before its name (the H100 and the H200
    share names)."""
    return f"{path.parent.name}/{path.name}" if path.parent.parent == GPU_DATA else path.name


def first_launch(page: Path) -> dict[str, str]:
    """The first launch of an `ncu --csv --page raw` page (plain or gzip) as {column: cell}, read by
    the csv module, not the engine: past any `==PROF==` lines before the header and the units row
    after it."""
    opener = gzip.open if page.suffix == ".gz" else open
    with opener(page, "rt", newline="", encoding="utf-8-sig") as handle:
        rows = [r for r in csv.reader(handle) if r]
    header = next(r for r in rows if r[0] == "ID")
    at = rows.index(header) + 1
    first = rows[at + 1] if rows[at][0] == "" else rows[at]
    return dict(zip(header, first, strict=True))


@cache
def report_of(path: Path):
    """Each file read once for all the tests of a session (each only reads it)."""
    return read_report(path)
