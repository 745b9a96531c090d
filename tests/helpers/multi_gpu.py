"""A raw page with launches on two GPUs (an A100 and an H100), read into a Report."""

from __future__ import annotations

from flopscope.core import read_report

from .accounting import SIMT, fp32_only
from .raw_csv import page

UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "smsp__cycles_elapsed.avg.per_second": "cycle/second",
    "dram__bytes.sum": "byte",
    "sm__inst_executed_pipe_tensor.sum": "inst",
    **SIMT,
}


A100, H100 = "NVIDIA A100-PCIE-40GB", "NVIDIA H100 PCIe"
CLOCK = {A100: 1.41e9, H100: 1.755e9}


CC = {A100: "8.0", H100: "9.0"}


# "dense": 2e9 FLOP (1e9 FFMA) over 1e8 bytes, 20 FLOP/B: compute bound on the A100, memory bound on
# the H100. "stream": 1e9 bytes in 0.8 ms, 1.25 TB/s, below both GPUs' DRAM peak (in 0.5 ms it moved
# 2 TB/s, which no A100-PCIE-40GB can: flopscope now warns of a launch above its own ceiling).
KERNELS = {"dense": (1e9, 1e8, 1e6), "stream": (1e6, 1e9, 8e5)}  # FFMA, DRAM bytes, ns


def launch(kernel: str, gpu: str) -> dict:
    ffma, dram, ns = KERNELS[kernel]
    return {
        "kernel": kernel,
        "gpu": gpu,
        "cc": CC[gpu],
        "gpu__time_duration.sum": ns,
        "dram__bytes.sum": dram,
        "smsp__cycles_elapsed.avg.per_second": CLOCK[gpu],
        "sm__inst_executed_pipe_tensor.sum": 0,
        **dict.fromkeys(SIMT, 0),
        **fp32_only(ffma),
    }


def two_gpus(tmp_path):
    """Each kernel once on the A100, twice on the H100 (the GPU of most launches)."""
    rows = [launch(k, g) for g in (A100, H100, H100) for k in KERNELS]
    return read_report(page(tmp_path / "two_gpus.csv", UNITS, rows))
