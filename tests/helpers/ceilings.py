"""Stored ceilings results for tests: no GPU runs the suite, so these are SYNTHETIC (written by the
tests, not measured anywhere), at the fractions of the datasheet that published microbenchmarks
report for an H100 (DRAM ~86%, FP32 ~89%, issue 22). The datasheet figures are read from
core/data/gpus.csv here, not through flopscope, so a test's expected numbers do not come from the
code under test."""

from __future__ import annotations

import csv
from pathlib import Path

from flopscope.core.store.ceilings import Ceilings

GPUS = Path(__file__).parents[2] / "core" / "data" / "gpus.csv"
SYNTHETIC = "synthetic (test data, not measured)"


def datasheet(key: str) -> dict[str, float]:
    """A GPU's datasheet figures (B/s, FLOP/s) from the database file: dram, fp32, fp64."""
    row = next(r for r in csv.DictReader(GPUS.open()) if r["key"] == key)
    return {
        "dram": float(row["dram_gb_per_s"]) * 1e9,
        "fp32": float(row["fp32_tflops"]) * 1e12,
        "fp64": float(row["fp64_tflops"]) * 1e12,
    }


def synthetic(
    gpu: str = "NVIDIA H100 80GB HBM3",
    key: str = "h100-sxm",
    host: str = "gpubox",
    driver: str = "580.159.04",
    measured: float = 1.7e9,
    fp64: bool = False,
) -> Ceilings:
    """A stored-ceilings result for `gpu` at 86% of its datasheet DRAM and 89% of its FP32 (and 80%
    of its FP64)."""
    sheet = datasheet(key)
    values = {"dram_bytes_per_s": 0.86 * sheet["dram"], "fp32_flop_per_s": 0.89 * sheet["fp32"]}
    if fp64:
        values["fp64_flop_per_s"] = 0.80 * sheet["fp64"]
    return Ceilings(
        host,
        gpu,
        driver,
        values,
        measured=measured,
        how={"torch": "2.11.0+cu130"},
        origin=SYNTHETIC,
    )


RECORDED_DIR = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "ceilings"


def recorded_doc(n: int = 1) -> dict:
    """The n-th `flopscope ceilings --json` measurement made on the project's H100 (capture part e,
    README there): real numbers, unlike synthetic()."""
    import json

    (doc,) = json.loads((RECORDED_DIR / f"ceilings_{n}.json").read_text())
    return doc
