"""The GPU datasheet database (core/data/gpus.csv): ceilings when a report carries no peak
counters."""

from __future__ import annotations

import csv
import difflib
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .errors import FlopscopeError

TFLOPS = 1e12
GBPS = 1e9
# Ceiling name -> database column (TFLOP/s). Tensor rates are dense, with FP32 accumulate except
# *_acc16.
CEILINGS = {
    "fp64": "fp64_tflops",
    "fp32": "fp32_tflops",
    "fp16": "fp16_tflops",
    "tensor_fp64": "fp64_tensor_tflops",
    "tensor_tf32": "tf32_tensor_tflops",
    "tensor_fp16": "fp16_tensor_tflops",
    "tensor_bf16": "bf16_tensor_tflops",
    "tensor_fp8": "fp8_tensor_tflops",
    "tensor_fp16_acc16": "fp16_acc16_tensor_tflops",
    "tensor_fp8_acc16": "fp8_acc16_tensor_tflops",
}
# FP16-accumulate tensor rates: where the database leaves them empty, the FP32-accumulate rate (the
# same on data-center parts; GeForce runs FP32 accumulate at half rate and lists both).
ACC16_OF = {"tensor_fp16_acc16": "tensor_fp16", "tensor_fp8_acc16": "tensor_fp8"}
# Ceilings NVIDIA quotes at the tensor reference clock: Hopper's TF32/FP16/BF16/FP8 tensor peaks are
# at a lower clock than its SIMT peaks (H100 SXM: 989.4e12 / (132 SMs x 4096 FLOP/clk) = 1830 MHz,
# not 1980); its FP64 tensor peak is at the boost clock (66.9 = 2 x the FP64 SIMT 33.5).
AT_TENSOR_CLOCK = {
    "tensor_tf32",
    "tensor_fp16",
    "tensor_bf16",
    "tensor_fp8",
    "tensor_fp16_acc16",
    "tensor_fp8_acc16",
}


@dataclass(frozen=True)
class Gpu:
    key: str
    names: tuple[str, ...]
    arch: str
    compute_capability: str
    sms: int | None
    boost_clock_hz: float
    # the clock the tensor peaks are quoted at (AT_TENSOR_CLOCK); the boost clock if empty
    tensor_clock_hz: float
    peaks: dict[str, float]  # ceiling name -> FLOP/s (NaN where the GPU has no such unit)
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


def _row(row: dict[str, str]) -> Gpu:
    sms = _num(row["sms"])
    peaks = {c: _num(row[col]) * TFLOPS for c, col in CEILINGS.items()}
    for acc16, acc32 in ACC16_OF.items():
        if math.isnan(peaks[acc16]):
            peaks[acc16] = peaks[acc32]
    return Gpu(
        key=row["key"],
        names=tuple(n.strip() for n in row["names"].split("|") if n.strip()),
        arch=row["vendor_arch"],
        compute_capability=row["compute_capability"],
        sms=None if math.isnan(sms) else int(sms),
        boost_clock_hz=_num(row["boost_clock_mhz"]) * 1e6,
        tensor_clock_hz=_num(row["tensor_clock_mhz"] or row["boost_clock_mhz"]) * 1e6,
        peaks=peaks,
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
            name = name[len(prefix) :]
    return name.replace("-", " ").replace("_", " ")


def find_gpu(name: str | None, sms: int | None = None) -> Gpu | None:
    """The database row for a device name as ncu or nvidia-smi print it (or a key), else None."""
    if not name:
        return None
    wanted = _norm(name)
    hits = [
        g for g in all_gpus() if wanted == _norm(g.key) or any(wanted == _norm(n) for n in g.names)
    ]
    if sms is not None and len(hits) > 1:
        hits = [g for g in hits if g.sms == sms] or hits
    return hits[0] if hits else None


def require_gpu(name: str, cc: set[str] | None = None) -> Gpu:
    """The database GPU `--gpu NAME` names; refused, with the close names, where it names none, and
    where its compute capability is not the report's (`cc`): another architecture's ceilings say
    nothing about it."""
    gpu = find_gpu(name)
    if gpu is None:
        close = similar(name)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise FlopscopeError(
            f"--gpu {name}",
            "not in the GPU database",
            f"{hint}run `flopscope gpus` for the names it knows",
        )
    wrong = {c for c in cc or set() if _cc(c) != _cc(gpu.compute_capability)}
    if wrong:
        ran = ", ".join(sorted(wrong))
        same = [
            g.key for g in all_gpus() if any(_cc(g.compute_capability) == _cc(c) for c in wrong)
        ]
        hint = (
            f"GPUs of CC {ran}: {', '.join(same[:6])}"
            if same
            else "`flopscope gpus` lists the GPUs it knows"
        )
        raise FlopscopeError(
            f"--gpu {name}",
            f"{gpu.name} is compute capability {gpu.compute_capability}, but the report's launches"
            f" ran on CC {ran}",
            hint,
        )
    return gpu


def same_cc(a: object, b: object) -> bool:
    """Two compute capabilities, however written ('8.0', '8', 8.0), are one."""
    return _cc(a) == _cc(b)


def similar(name: str, n: int = 6) -> list[str]:
    """Database keys close to a name: those containing it as a word ('V100' -> every V100), then
    difflib's."""
    wanted = _norm(name)
    pattern = re.compile(r"(?<![\w])" + re.escape(wanted) + r"(?![\w])")
    labels = {g.key: [_norm(g.key), *(_norm(x) for x in g.names)] for g in all_gpus()}
    contained = [key for key, texts in labels.items() if any(pattern.search(t) for t in texts)]
    everything = {t: key for key, texts in labels.items() for t in texts}
    close = [
        everything[t] for t in difflib.get_close_matches(wanted, list(everything), n=n, cutoff=0.6)
    ]
    return list(dict.fromkeys(contained + close))[:n]


def _cc(text: object) -> tuple[int, ...] | str:
    """'8.0', '8', 8.0 -> (8, 0); anything else as text."""
    parts = str(text).strip().split(".")
    try:
        return tuple(int(p) for p in parts) + (0,) * (2 - len(parts))
    except ValueError:
        return str(text).strip()


# Words after a name that make it another product: "RTX 4090 D", "RTX 5070 Ti", "H100 NVL", "RTX
# 4090 Laptop".
_VARIANT = re.compile(r"\s+(?:ti|super|d|laptop|mobile|max-q|nvl|ada)\b", re.IGNORECASE)


def gpu_in_text(text: str, cc: str | None = None) -> Gpu | None:
    """A GPU named in free text (a program's output before ncu's CSV): the longest database name
    found as whole words ("NVIDIA A10" is not in "NVIDIA A100" or "NVIDIA A10G", "RTX 5070" not in
    "RTX 5070 Ti"), of the compute capability `cc` where the file gives one."""
    if not text:
        return None
    best = None
    for gpu in all_gpus():
        if cc and _cc(gpu.compute_capability) != _cc(cc):
            continue
        for n in gpu.names:
            if (best is None or len(n) > len(best[0])) and _named(text, n):
                best = (n, gpu)
    return best[1] if best else None


def _named(text: str, name: str) -> bool:
    for m in re.finditer(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text, re.IGNORECASE):
        if not _VARIANT.match(text, m.end()):
            return True
    return False
