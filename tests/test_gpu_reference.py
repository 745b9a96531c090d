"""The project's own GPU captures (tests/data/gpu/<gpu>/, made by capture.sh) against analytic counts.

Each capture profiles exactly one measured call (cudaProfilerStart/Stop around it), so a report's FLOPs are
that call's: a GEMM's 2*M*N*K, nn.Linear's 2*batch*in*out plus the bias adds. The expected numbers come from
the file names and the layer shape, never from the engine. Each test prints its measured ratio (`pytest -s`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from flopscope.core import read_report

GPU_DATA = Path(__file__).parent / "data" / "gpu"
NO_CAPTURE = "no GPU capture committed yet: run tests/data/gpu/capture.sh on a GPU (tests/data/gpu/README.md)"
GEMM = re.compile(r"^gemm_(?P<dtype>fp64|fp32|tf32|fp16|bf16|fp8)_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)$")
# Where each GEMM's FLOPs must land: the SIMT column for FP32 with TF32 off, a tensor column otherwise
# (FP64 GEMMs run on DMMA tensor cores from Ampere A100/Hopper on; on other GPUs they are SIMT DFMA).
COLUMN = {"fp32": ["flop_fp32"], "tf32": ["flop_tensor_tf32"], "fp16": ["flop_tensor_fp16"],
          "bf16": ["flop_tensor_bf16"], "fp8": ["flop_tensor_fp8"], "fp64": ["flop_tensor_fp64", "flop_fp64"]}
IN_FEATURES, OUT_FEATURES = 256, 29423  # the seed's nn.Linear


def _captures(pattern: str) -> list:
    found = sorted(GPU_DATA.glob(f"*/{pattern}"))
    return [pytest.param(p, id=f"{p.parent.name}/{p.stem}") for p in found] or [
        pytest.param(None, marks=pytest.mark.skip(reason=NO_CAPTURE), id="none")]


@pytest.mark.parametrize("path", _captures("gemm_*.ncu-rep"))
def test_gemm_flops_are_2mnk(path):
    spec = GEMM.match(path.stem)
    m, n, k = (int(spec[d]) for d in "mnk")
    analytic = 2 * m * n * k
    kernels = read_report(path).kernels
    flop = kernels["flop"].sum()
    ratio = flop / analytic
    print(f"\n{path.parent.name} {path.stem}: engine {flop:.6g} FLOP, 2*M*N*K {analytic:.6g}, ratio {ratio:.5f}")
    assert not kernels["flop"].isna().any(), "every launch's FLOPs must be known"
    if m % 128 == 0 and n % 128 == 0 and k % 64 == 0:  # whole tiles: no padded work to count
        assert ratio == pytest.approx(1.0, rel=0.01)
    else:  # partial tiles may run padded MMA work, which the counters see; never less than the math
        assert 0.99 <= ratio <= 1.25
    where = sum(kernels[c].fillna(0).sum() for c in COLUMN[spec["dtype"]] if c in kernels)
    assert where / flop > 0.99, f"{spec['dtype']} FLOPs should land in {COLUMN[spec['dtype']]}"


def _batch(path: Path) -> int:
    return int(path.stem.removeprefix("linear_bs"))


@pytest.mark.parametrize("gpu_dir", sorted({p.parent for p in GPU_DATA.glob("*/linear_bs*.ncu-rep")}) or
                         [pytest.param(None, marks=pytest.mark.skip(reason=NO_CAPTURE))])
def test_linear_flops_grow_with_batch_size(gpu_dir):
    """The seed's puzzle: FLOPs that did not change with batch size. Measured per call, they grow linearly."""
    runs = sorted(gpu_dir.glob("linear_bs*.ncu-rep"), key=_batch)
    batches = np.array([_batch(p) for p in runs], dtype=float)
    flops = np.array([read_report(p).kernels["flop"].sum() for p in runs])
    per_sample = flops / batches
    analytic = 2 * IN_FEATURES * OUT_FEATURES + OUT_FEATURES  # matmul FMAs (2 FLOPs) + bias adds
    for bs, f in zip(batches, per_sample, strict=True):
        print(f"\n{gpu_dir.name} bs={int(bs)}: {f:.6g} FLOP/sample, {f / analytic:.5f} of analytic")
    assert len(runs) >= 3
    spread = per_sample.max() / per_sample.min() - 1
    assert spread < 0.05, f"FLOP per sample varies by {spread:.2%} across batch sizes"
    assert np.median(per_sample) == pytest.approx(analytic, rel=0.05)
    slope = np.polyfit(batches, flops, 1)[0]
    assert slope == pytest.approx(analytic, rel=0.05)


ELEMENTWISE_FMAS = 2**24 * 16  # workloads.py elementwise: 2^24 values, x = x*a + b 16 times (capture.sh)


@pytest.mark.parametrize("path", _captures("elementwise_*.ncu-rep"))
def test_fma_weighting_of_half_and_float_counters(path):
    """HFMA2 does two FMAs per counted thread instruction, FFMA one: the engine's FLOPs must be 2 x FMAs.
    Scalar HFMA is the open question (one-lane HFMA2?): its ratio is printed and must be 1 or 2."""
    mode = path.stem.removeprefix("elementwise_")
    kernels = read_report(path).kernels
    column = "flop_fp32" if mode == "float" else "flop_fp16"
    ratio = kernels[column].sum() / (2 * ELEMENTWISE_FMAS)
    print(f"\n{path.parent.name} {mode}: {column} / (2 x FMAs) = {ratio:.4f}")
    if mode == "half":
        assert ratio == pytest.approx(1.0, rel=0.01) or ratio == pytest.approx(2.0, rel=0.01)
    else:
        assert ratio == pytest.approx(1.0, rel=0.01)
