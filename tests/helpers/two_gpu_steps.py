"""Training steps on two GPUs: the H100 FP32 training step played three times under `step N`
ranges (tests/helpers/steps.py), every other launch's device renamed `NVIDIA H100 PCIe` (as
two_gpu_capture.py does), and each GPU's figures per step read back with `csv` alone."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from .raw_csv import SECONDS
from .steps import two_step_page
from .two_gpu_capture import OTHER

_NAME = "device__attribute_display_name"


def two_gpu_step_page(folder: Path, steps: int = 3) -> Path:
    """The step page with launches alternating between the captured H100 SXM and an H100 PCIe."""
    page = two_step_page(folder / "steps.csv", steps=steps)
    with page.open(newline="") as f:
        rows = list(csv.reader(f))
    name = rows[0].index(_NAME)
    for n, row in enumerate(rows[2:]):
        if n % 2:
            row[name] = OTHER
    out = folder / "two_gpu_steps.csv"
    with out.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out


def gpu_steps(page: Path) -> dict[str, dict[int, tuple[float, float, float]]]:
    """{GPU name: {step: (seconds, FP32 FLOPs (add + mul + 2 x fma), TF32 tensor FLOPs)}} from each
    launch's cells."""
    with page.open(newline="") as f:
        header, units, *rows = csv.reader(f)
    col = {h: i for i, h in enumerate(header)}
    cell = next(i for i, h in enumerate(header) if "Start/Stop_Range" in h)
    scale = SECONDS[units[col["gpu__time_duration.sum"]]]

    def number(r: list[str], name: str) -> float:
        return float(r[col[name]].replace(",", "") or 0)

    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0] * 3))
    for r in rows:
        step = int(r[cell].split(":step ", 1)[1].split(":", 1)[0])
        ops = [
            number(r, f"smsp__sass_thread_inst_executed_op_f{op}_pred_on.sum")
            for op in ("add", "mul", "fma")
        ]
        figures = out[r[col[_NAME]]][step]
        figures[0] += number(r, "gpu__time_duration.sum") * scale
        figures[1] += ops[0] + ops[1] + 2 * ops[2]
        figures[2] += number(r, "sm__ops_path_tensor_src_tf32_dst_fp32.sum")
    return {g: {n: (f[0], f[1], f[2]) for n, f in s.items()} for g, s in out.items()}
