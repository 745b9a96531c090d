"""The project's own H100 capture (tests/data/gpu/nvidia_h100_80gb_hbm3/) replayed by the ncu
stand-in."""

from __future__ import annotations

from pathlib import Path

from .profile import standin_script

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
# `flopscope profile ... --name linear_bs8` on the H100
RUN = H100 / "flopscope_home" / "runs" / "linear_bs8"
WORKLOADS = H100.parent / "workloads.py"
LINEAR_BS8 = ["python3", str(WORKLOADS), "linear", "--batch-size", "8"]


def replay_ncu(tmp_path: Path, console: Path, report: Path) -> Path:
    """An `ncu` for --ncu that replays one GPU capture: its console, and its report where --export
    says."""
    return standin_script(
        tmp_path / f"ncu-{console.stem}", "--standin-capture", console, "--standin-report", report
    )
