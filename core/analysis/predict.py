"""Roofline time predictions (PALEO's compute term, a DRAM term) and utilization (no torch here).

PALEO (Qi, Sparks & Talwalkar, ICLR 2017) predicts a layer's compute time as FLOPs / (peak x PPP),
where the platform percent of peak (PPP) says what fraction of the datasheet peak real kernels
reach. We apply it to a whole forward pass or training step and bound it by memory, as a roofline
does:

    seconds = max(FLOPs / (peak at the chosen precision x PPP), bytes / DRAM bandwidth)

the larger term naming the bound. The bytes are what the caller says moves (`flopscope model`:
parameters + activations, see model_flops.BYTES); the bandwidth is the datasheet's, without PPP, so
the memory term is a lower bound. Communication (PALEO's third term) is not modelled."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..common.errors import FlopscopeError
from ..common.gpus import Gpu, require_gpu

# --dtype -> GPU database ceiling. fp32 is the SIMT peak (but see TF32_BY_DEFAULT); the others are
# dense tensor-core peaks with FP32 accumulate, as in core/data/gpus.csv. fp64 is the SIMT peak
# here, the FP64 tensor peak on a GPU that has one (ceiling_for).
PRECISION_CEILING = {
    "fp64": "fp64",
    "fp32": "fp32",
    "tf32": "tensor_tf32",
    "fp16": "tensor_fp16",
    "bf16": "tensor_bf16",
}
# Ceiling -> the --dtype whose work runs there
DTYPE_OF_CEILING = {**{c: d for d, c in PRECISION_CEILING.items()}, "tensor_fp64": "fp64"}
# `--dtype fp32` is float32 under PyTorch's defaults, which are not all FP32:
# torch.backends.cudnn.allow_tf32 is True, so cuDNN runs float32 convolutions on TF32 tensor cores
# where the GPU has them (Ampere and later), while torch.backends.cuda.matmul.allow_tf32 is False
# since torch 1.12, so matmuls (attention's products too) stay on the FP32 SIMT units. The operator
# families (model_flops.FAMILIES) that run on TF32 by default:
TF32_BY_DEFAULT = ("convolution",)
# Without --gpu: one Ampere and one Hopper part, both with every precision above.
DEFAULT_GPUS = ("a100-sxm4-80gb", "h100-sxm")
# Database rows that are one device of a multi-GPU board: the note predictions for it carry.
BOARDS = {
    "k80": (
        "Tesla K80: a K80 board is two GK210 GPUs and a framework sees one; predictions use ONE"
        " device (4.37 TFLOP/s FP32, 1.46 FP64), not the board's 8.73 / 2.91. Two devices need data"
        " parallelism and at best halve the time."
    ),
}


@dataclass
class Prediction:
    gpu: str
    gpu_key: str
    precision: str
    # the database ceiling the FLOPs are held against; several joined by "+", most FLOPs first
    ceiling: str
    # with several ceilings, their FLOP-weighted harmonic mean: FLOPs / Σ(FLOPs_c / peak_c)
    peak_flop_per_s: float
    ppp: float
    flop: float
    seconds: float
    # samples (first input dimension) per second; None when nothing takes time
    per_second: float | None
    steps_per_second: float | None
    compute_seconds: float = math.nan  # FLOPs / (peak x PPP)
    bytes: float | None = None  # DRAM bytes the prediction assumes; None: compute only
    dram_bytes_per_s: float | None = None
    memory_seconds: float | None = None  # bytes / DRAM bandwidth
    bound: str = "compute"  # the larger of the two terms: compute or memory
    # FLOPs held against each ceiling
    flop_by_ceiling: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_ppp(ppp: float) -> float:
    if not 0 < ppp <= 1:
        raise FlopscopeError(
            f"--ppp {ppp}", "platform percent of peak must be in (0, 1]", "e.g. --ppp 0.5"
        )
    return ppp


def ceiling_for(gpu: Gpu | None, precision: str) -> str:
    """The database ceiling a model's matrix products at PRECISION run at on GPU: PRECISION_CEILING,
    except fp64 on a GPU with FP64 tensor cores (A100, H100: cuBLAS DGEMM and FP64 convolutions run
    as DMMA there)."""
    if precision not in PRECISION_CEILING:
        raise FlopscopeError(
            f"--dtype {precision}",
            "unknown precision",
            f"use one of {', '.join(PRECISION_CEILING)}",
        )
    if precision == "fp64" and gpu is not None and gpu.peak("tensor_fp64") > 0:  # NaN > 0 is False
        return "tensor_fp64"
    return PRECISION_CEILING[precision]


def peak_for(gpu: Gpu, precision: str) -> float:
    """Datasheet peak FLOP/s of one device at PRECISION, or a one-line error where the GPU has no
    such unit."""
    ceiling = ceiling_for(gpu, precision)
    peak = gpu.peak(ceiling)
    if math.isnan(peak) or peak <= 0:
        # torch's allow_tf32 is a no-op before Ampere: float32 work simply runs on the FP32 units
        # there
        fix = (
            "choose another --dtype (fp32: without TF32 units, torch runs float32 as FP32) or GPU"
            if precision == "tf32"
            else "choose another --dtype or GPU"
        )
        raise FlopscopeError(
            f"--gpu {gpu.name}", f"has no {precision} peak in the GPU database ({ceiling})", fix
        )
    return peak


def flop_by_ceiling(
    flop: float, gpu: Gpu, precision: str, families: Mapping[str, float] | None = None
) -> dict[str, float]:
    """FLOPs per database ceiling, most first: all at `ceiling_for`, except that at fp32 the
    TF32_BY_DEFAULT families' FLOPs (`families`: FLOPs per operator family) go to the TF32 tensor
    peak on a GPU that has one."""
    ceiling = ceiling_for(gpu, precision)
    if precision != "fp32" or not families or not gpu.peak("tensor_tf32") > 0:  # NaN > 0 is False
        return {ceiling: flop}
    tf32 = min(sum(families.get(f, 0) for f in TF32_BY_DEFAULT), flop)
    split = {c: f for c, f in (("tensor_tf32", tf32), (ceiling, flop - tf32)) if f}
    return dict(sorted(split.items(), key=lambda kv: -kv[1])) or {ceiling: flop}


def harmonic_peak(split: dict[str, float], peaks: dict[str, float]) -> float:
    """The peak FLOP/s at which the FLOPs SPLIT holds against each ceiling take as long as they do
    at PEAKS (each ceiling's): their FLOP-weighted harmonic mean, FLOPs / Σ(FLOPs_c / peak_c); the
    first peak when no FLOPs."""
    at_peak = sum(f / peaks[c] for c, f in split.items())  # seconds at 100% of every peak
    # that peak exactly, not FLOPs / (FLOPs / peak) to the last bit
    if len(split) == 1 or not at_peak:
        return peaks[next(iter(split))]
    return sum(split.values()) / at_peak


def paleo_seconds(flop: float, peak_flop_per_s: float, ppp: float = 1.0) -> float:
    """PALEO compute time: FLOPs / (peak x platform percent of peak)."""
    return flop / (peak_flop_per_s * ppp)


def predict(
    flop: float,
    gpu: Gpu,
    precision: str,
    ppp: float = 0.5,
    batch: int = 1,
    nbytes: float | None = None,
    families: Mapping[str, float] | None = None,
) -> Prediction:
    """max(FLOPs / (peak x PPP), NBYTES / DRAM bandwidth); without NBYTES (or a known bandwidth),
    compute only. `families` (FLOPs per operator family) lets fp32 convolutions run at the TF32 peak
    (`flop_by_ceiling`); the compute term is then the sum of each ceiling's FLOPs / (its peak x
    PPP)."""
    split = flop_by_ceiling(flop, gpu, precision, families)
    # Each ceiling checked for a datasheet value: --dtype tf32 on a T4 read its NaN TF32 peak and
    # printed NaN times
    peaks = {c: peak_for(gpu, DTYPE_OF_CEILING[c]) for c in split}
    peak = harmonic_peak(split, peaks)
    compute = flop / peak / check_ppp(ppp) if flop else 0.0
    bandwidth = gpu.dram_bytes_per_s if gpu.dram_bytes_per_s > 0 else None  # NaN > 0 is False
    memory = nbytes / bandwidth if nbytes is not None and bandwidth else None
    seconds = max(compute, memory or 0.0)
    return Prediction(
        gpu=gpu.name,
        gpu_key=gpu.key,
        precision=precision,
        ceiling="+".join(split),
        peak_flop_per_s=peak,
        ppp=ppp,
        flop=flop,
        seconds=seconds,
        per_second=batch / seconds if seconds else None,
        steps_per_second=1 / seconds if seconds else None,
        compute_seconds=compute,
        bytes=nbytes,
        dram_bytes_per_s=bandwidth if memory is not None else None,
        memory_seconds=memory,
        bound="memory" if memory is not None and memory > compute else "compute",
        flop_by_ceiling=split,
    )


def predict_all(
    flop: float,
    gpu_names: list[str] | None,
    precision: str,
    ppp: float = 0.5,
    batch: int = 1,
    nbytes: float | None = None,
    families: Mapping[str, float] | None = None,
) -> tuple[list[Prediction], list[str]]:
    """Predictions for every --gpu (an error if one lacks the precision), else for DEFAULT_GPUS; and
    notes. `families`: FLOPs per operator family (`ModelFlops.family_flops`), for fp32's TF32
    convolutions."""
    gpus = (
        [require_gpu(n) for n in gpu_names] if gpu_names else [require_gpu(k) for k in DEFAULT_GPUS]
    )
    predictions = [predict(flop, g, precision, ppp, batch, nbytes, families) for g in gpus]
    notes = [BOARDS[key] for key in dict.fromkeys(g.key for g in gpus) if key in BOARDS]
    dmma = [
        f"{g.name} {g.peak('tensor_fp64') / 1e12:.3g} (SIMT {g.peak('fp64') / 1e12:.3g})"
        for g in gpus
        if precision == "fp64" and ceiling_for(g, precision) == "tensor_fp64"
    ]
    if dmma:
        notes.append(
            "fp64 predictions use the FP64 tensor-core peak, where matrix products and"
            f" convolutions run: {', '.join(dmma)} TFLOP/s"
        )
    if precision == "fp32":
        notes.append(
            fp32_note(
                {
                    g.key: g.peak("tensor_tf32")
                    for g, p in zip(gpus, predictions, strict=True)
                    if "tensor_tf32" in p.flop_by_ceiling
                }
            )
        )
    return predictions, notes


def fp32_note(tf32_peaks: dict[str, float]) -> str:
    """What fp32 means here: float32 under torch's defaults, TF32 convolutions included
    (TF32_BY_DEFAULT). `tf32_peaks`: GPU key -> the TF32 peak FLOP/s its convolutions were held
    against (none: all FP32)."""
    tf32 = [f"{key} {peak / 1e12:.4g}" for key, peak in tf32_peaks.items()]
    matmul = (
        "matmuls and attention at the FP32 peak (torch.backends.cuda.matmul.allow_tf32 = False; set"
        " True, use --dtype tf32)"
    )
    if not tf32:
        return f"--dtype fp32 is float32 under torch's defaults: {matmul}"
    return (
        "--dtype fp32 is float32 under torch's defaults: convolutions on TF32 tensor cores"
        f" (torch.backends.cudnn.allow_tf32 = True; {', '.join(tf32)} TFLOP/s), {matmul}; the peak"
        " is then the FLOP-weighted harmonic mean of the two"
    )


def utilization(flop: float, seconds: float, peak_flop_per_s: float) -> float:
    """FLOPs / (time x peak): the share of the peak the work would need to finish in that time."""
    if not seconds or not peak_flop_per_s or math.isnan(seconds) or math.isnan(peak_flop_per_s):
        return math.nan
    return flop / (seconds * peak_flop_per_s)
