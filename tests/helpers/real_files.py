"""Every real ncu file the project holds: the shared fixtures, the H100 capture and the bundled demo."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from flopscope.core import read_report

from ..conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
DEMO = ROOT / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"


def real_files() -> list[Path]:
    shared = (
        sorted(p for p in FIXTURES.glob("*") if p.suffix in {".ncu-rep", ".csv", ".log"}) if FIXTURES.is_dir() else []
    )
    return [*shared, *sorted(H100.glob("*.ncu-rep.xz")), *sorted(H100.glob("*.csv.gz")), DEMO]


@cache
def report_of(path: Path):
    """Each file read once for all the tests of a session (each only reads it)."""
    return read_report(path)
