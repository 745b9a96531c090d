"""A real capture made into a two-GPU file: the H100 transformer step's raw page with every other
launch's device renamed `NVIDIA H100 PCIe` (the repro of issue 38), and the expected figures read
from that page with `csv` alone."""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from pathlib import Path

from .raw_csv import SECONDS

SOURCE = (
    Path(__file__).parents[1] / "data/gpu/nvidia_h100_80gb_hbm3/train_transformer_bf16_bs8.csv.gz"
)
OTHER = "NVIDIA H100 PCIe"


def two_gpu_page(folder: Path) -> Path:
    """The page, launches alternating between the captured H100 SXM and an H100 PCIe."""
    with gzip.open(SOURCE, "rt", newline="") as f:
        rows = list(csv.reader(f))
    name = rows[0].index("device__attribute_display_name")
    for n, row in enumerate(rows[2:]):
        if n % 2:
            row[name] = OTHER
    path = folder / "two_gpus.csv"
    with path.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return path


def time_per_gpu(path: Path) -> dict[str, tuple[int, float]]:
    """Launches and summed `gpu__time_duration.sum` (seconds) per GPU name, read without
    flopscope."""
    with path.open(newline="") as f:
        header, units, *rows = csv.reader(f)
    gpu, time = (
        header.index("device__attribute_display_name"),
        header.index("gpu__time_duration.sum"),
    )
    scale = SECONDS[units[time]]
    out: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for row in rows:
        out[row[gpu]][0] += 1
        out[row[gpu]][1] += float(row[time].replace(",", "")) * scale
    return {g: (n, t) for g, (n, t) in out.items()}
