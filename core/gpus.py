"""The GPU datasheet database (core/data/gpus.csv): ceilings when a report carries no peak counters."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .errors import FlopscopeError

TFLOPS = 1e12
GBPS = 1e9
# Ceiling name -> database column (TFLOP/s). Tensor rates are dense with FP32 accumulate.
CEILINGS = {
    "fp64": "fp64_tflops",
    "fp32": "fp32_tflops",
    "fp16": "fp16_tflops",
    "tensor_fp64": "fp64_tensor_tflops",
    "tensor_tf32": "tf32_tensor_tflops",
    "tensor_fp16": "fp16_tensor_tflops",
    "tensor_bf16": "bf16_tensor_tflops",
    "tensor_fp8": "fp8_tensor_tflops",
}
# Ceilings NVIDIA quotes at the tensor reference clock: Hopper's TF32/FP16/BF16/FP8 tensor peaks are at a
# lower clock than its SIMT peaks (H100 SXM: 989.4e12 / (132 SMs x 4096 FLOP/clk) = 1830 MHz, not 1980);
# its FP64 tensor peak is at the boost clock (66.9 = 2 x the FP64 SIMT 33.5).
AT_TENSOR_CLOCK = {"tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8"}


@dataclass(frozen=True)
class Gpu:
    key: str
    names: tuple[str, ...]
    arch: str
    compute_capability: str
    sms: int | None
    boost_clock_hz: float
    tensor_clock_hz: float  # the clock the tensor peaks are quoted at (AT_TENSOR_CLOCK); the boost clock if empty
    peaks: dict  # ceiling name -> FLOP/s (NaN where the GPU has no such unit)
    dram_bytes_per_s: float
    l2_bytes: float
    memory_bytes: float
    notes: str
    source: str

    @property
    def name(self) -> str:
        return self.names[0] if self.names else self.key

    def peak(self, ceiling: str) -> float:
        return self.peaks.get(ceiling, math.nan)

    def clock_hz(self, ceiling: str) -> float:
        """The SM clock the datasheet's `ceiling` is quoted at (NaN where not published)."""
        return self.tensor_clock_hz if ceiling in AT_TENSOR_CLOCK else self.boost_clock_hz


def _num(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _row(row: dict) -> Gpu:
    sms = _num(row["sms"])
    return Gpu(
        key=row["key"],
        names=tuple(n.strip() for n in row["names"].split("|") if n.strip()),
        arch=row["vendor_arch"],
        compute_capability=row["compute_capability"],
        sms=None if math.isnan(sms) else int(sms),
        boost_clock_hz=_num(row["boost_clock_mhz"]) * 1e6,
        tensor_clock_hz=_num(row["tensor_clock_mhz"] or row["boost_clock_mhz"]) * 1e6,
        peaks={c: _num(row[col]) * TFLOPS for c, col in CEILINGS.items()},
        dram_bytes_per_s=_num(row["dram_gb_per_s"]) * GBPS,
        l2_bytes=_num(row["l2_mib"]) * 2**20,
        memory_bytes=_num(row["memory_gib"]) * 2**30,
        notes=row["notes"],
        source=row["source"],
    )


@lru_cache(maxsize=1)
def all_gpus() -> tuple[Gpu, ...]:
    text = resources.files("flopscope.core").joinpath("data/gpus.csv").read_text(encoding="utf-8")
    return tuple(_row(r) for r in csv.DictReader(text.splitlines()))


def _norm(name: str) -> str:
    name = name.strip().lower()
    for prefix in ("nvidia ", "tesla ", "geforce "):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name.replace("-", " ").replace("_", " ")


def find_gpu(name: str | None, sms: int | None = None) -> Gpu | None:
    """The database row for a device name as ncu or nvidia-smi print it (or a key), else None."""
    if not name:
        return None
    wanted = _norm(name)
    hits = [g for g in all_gpus() if wanted == _norm(g.key) or any(wanted == _norm(n) for n in g.names)]
    if sms is not None and len(hits) > 1:
        hits = [g for g in hits if g.sms == sms] or hits
    return hits[0] if hits else None


def require_gpu(name: str) -> Gpu:
    gpu = find_gpu(name)
    if gpu is None:
        raise FlopscopeError(f"--gpu {name}", "not in the GPU database",
                             "run `flopscope gpus` for the names it knows")
    return gpu


def gpu_in_text(text: str) -> Gpu | None:
    """A GPU named in free text (a program's output before ncu's CSV), longest name first."""
    if not text:
        return None
    lowered = text.lower()
    best = None
    for gpu in all_gpus():
        for n in gpu.names:
            if n.lower() in lowered and (best is None or len(n) > len(best[0])):
                best = (n, gpu)
    return best[1] if best else None
