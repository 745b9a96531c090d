"""Microbenchmarks of one GPU's ceilings through torch, run on the target as `python3 -c` (like the
doctor's probe: standard library and torch only, nothing of flopscope's). Prints one JSON object:
the GPU's name, the driver, each measured rate (SI) and how it was measured. A few seconds in all;
clocks, power and MIG are left as they are (nothing here touches them), so the numbers are what this
node delivers as it is configured.

Each rate is the best of REPS timed repetitions (CUDA events) after a warm-up: a ceiling is what the
hardware can reach, so the fastest run is the one to keep.

argv: DEVICE (a CUDA device index).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from types import ModuleType

REPS = 10
MIN_SECONDS = 0.4  # each ceiling runs at least this long, so the clock sampler sees it run
# (start, end) wall time of each _best_seconds loop, warm-up and compilation left out
TIMED: list[tuple[float, float]] = []


def _best_seconds(torch: ModuleType, fn: Callable[[], object], reps: int = REPS) -> float:
    fn()
    torch.cuda.synchronize()
    best, spent, done, t0 = float("inf"), 0.0, 0, time.time()
    while done < reps or spent < MIN_SECONDS:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3
        best, spent, done = min(best, seconds), spent + seconds, done + 1
    TIMED.append((t0, time.time()))
    return best


class ClockSampler:
    """The SM clock (MHz) while the benchmarks run, from `nvidia-smi` called in a loop: a ceiling
    means little without the clock it ran at (power or an admin's cap keep many nodes below the
    boost clock). Short calls, not `nvidia-smi -lms`, whose piped output is buffered and lost when
    it is stopped."""

    def __init__(self, index: int) -> None:
        self.index, self.running = str(index), True
        self.samples: list[tuple[float, float]] = []  # (wall time, MHz)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        query = [
            "nvidia-smi",
            "-i",
            self.index,
            "--query-gpu=clocks.sm",
            "--format=csv,noheader,nounits",
        ]
        while self.running:
            t0 = time.time()
            try:
                out = subprocess.run(query, capture_output=True, text=True, timeout=10).stdout
                self.samples.append(((t0 + time.time()) / 2, float(out.split()[0])))
            except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
                return  # no nvidia-smi: the ceilings are still measured, without their clock
            time.sleep(0.02)

    def median(self, t0: float, t1: float) -> float | None:
        inside = sorted(mhz for t, mhz in self.samples if t0 <= t <= t1)
        return inside[len(inside) // 2] if inside else None

    def stop(self) -> None:
        self.running = False
        self.thread.join(timeout=15)


def copy_rate(torch: ModuleType, nbytes: int) -> float:
    """Bytes read + written per second by a device-to-device copy of `nbytes`."""
    n = nbytes // 4
    src, dst = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
    return 2 * n * 4 / _best_seconds(torch, lambda: dst.copy_(src))


def l2_copy_rate(torch: ModuleType, nbytes: int, copies: int = 64) -> float:
    """Like copy_rate for a working set that stays in L2, `copies` copies replayed as one CUDA
    graph: one copy of a few MB takes microseconds, as long as launching it, so timed alone it
    measures the launch."""
    n = nbytes // 4
    src, dst = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    # warm-up on a side stream before capture, as torch's CUDA graph docs ask
    with torch.cuda.stream(side):
        dst.copy_(src)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(copies):
            dst.copy_(src)
    return copies * 2 * n * 4 / _best_seconds(torch, graph.replay)


# CHAINS independent FMA chains per element, unrolled, so the FMA pipe stays full and loop overhead
# does not take issue slots from it: 2 FLOPs per fma.
CHAINS = 8
_FMA_CODE = """template <typename T> T fma_chain(T x, T a, T b) {
  T c[%(chains)d];
  #pragma unroll
  for (int j = 0; j < %(chains)d; ++j) c[j] = x + T(j);
  #pragma unroll 16
  for (int i = 0; i < %(iters)d; ++i) {
    #pragma unroll
    for (int j = 0; j < %(chains)d; ++j) c[j] = c[j] * a + b;
  }
  T s = T(0);
  #pragma unroll
  for (int j = 0; j < %(chains)d; ++j) s += c[j];
  return s;
}"""
FMA_ITERS = 256


def fma_rate(torch: ModuleType, dtype: object, elements: int) -> float:
    """FLOP/s of elementwise FMA chains (torch.cuda.jiterator, documented as beta): compute bound,
    since each element does 2 * CHAINS * FMA_ITERS FLOPs for 4 memory accesses."""
    fn = torch.cuda.jiterator._create_jit_fn(_FMA_CODE % {"chains": CHAINS, "iters": FMA_ITERS})
    x = torch.rand(elements, device="cuda", dtype=dtype)
    a = torch.full_like(x, 0.999)
    b = torch.full_like(x, 1e-3)
    return elements * 2 * CHAINS * FMA_ITERS / _best_seconds(torch, lambda: fn(x, a, b), reps=5)


def gemm_rate(torch: ModuleType, dtype: object, n: int) -> float:
    a = torch.randn(n, n, device="cuda").to(dtype)
    b = torch.randn(n, n, device="cuda").to(dtype)
    return 2 * n**3 / _best_seconds(torch, lambda: torch.matmul(a, b), reps=5)


def fp8_rate(torch: ModuleType, n: int) -> float:
    a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
    # _scaled_mm wants b column-major
    b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device="cuda")
    return (
        2
        * n**3
        / _best_seconds(
            torch,
            lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            reps=5,
        )
    )


def _driver(index: int) -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", "-i", str(index), "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out.splitlines()[0] if out else "unknown"


def measure(index: int) -> dict[str, object]:
    import torch

    if not torch.cuda.is_available():
        # torch.version.cuda is None in a CPU-only build: say that, not "built with CUDA None"
        built = (
            f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        )
        return {"error": f"torch {torch.__version__} sees no CUDA GPU ({built})"}
    torch.cuda.set_device(index)
    props = torch.cuda.get_device_properties(index)
    l2 = getattr(props, "L2_cache_size", 0) or 50 * 2**20
    values: dict[str, float] = {}
    errors: dict[str, str] = {}
    dram_bytes = max(2 * l2, 2**30)
    runs: list[tuple[str, Callable[[], float]]] = [
        ("dram_bytes_per_s", lambda: copy_rate(torch, dram_bytes)),
        ("l2_bytes_per_s", lambda: l2_copy_rate(torch, l2 // 8)),
        (
            "fp32_flop_per_s",
            lambda: fma_rate(torch, torch.float32, props.multi_processor_count * 2048 * 8),
        ),
        (
            "fp64_flop_per_s",
            lambda: fma_rate(torch, torch.float64, props.multi_processor_count * 2048 * 2),
        ),
    ]
    if props.major >= 8:
        runs += [
            ("tensor_tf32_flop_per_s", lambda: _tf32(torch)),
            ("tensor_fp16_flop_per_s", lambda: gemm_rate(torch, torch.float16, 8192)),
            ("tensor_bf16_flop_per_s", lambda: gemm_rate(torch, torch.bfloat16, 8192)),
        ]
    if (
        (props.major, props.minor) >= (8, 9)
        and hasattr(torch, "float8_e4m3fn")
        and hasattr(torch, "_scaled_mm")
    ):
        runs.append(("tensor_fp8_flop_per_s", lambda: fp8_rate(torch, 8192)))
    clock = ClockSampler(index)
    clocks: dict[str, float | None] = {}
    for key, run in runs:
        TIMED.clear()
        try:
            values[key] = run()
        except Exception as exc:  # one ceiling torch cannot measure here must not lose the others
            errors[key] = (
                f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            )
        clocks[key] = clock.median(*TIMED[-1]) if TIMED else None
        torch.cuda.empty_cache()
    clock.stop()
    return {
        "gpu": torch.cuda.get_device_name(index),
        "driver": _driver(index),
        "values": values,
        "how": {
            "torch": torch.__version__,
            "cuda": str(torch.version.cuda),
            "device": str(index),
            "dram_copy_bytes": str(dram_bytes),
            "l2_copy_bytes": str(l2 // 8),
            "l2_copies_per_graph": "64",
            "gemm_n": "8192",
            "fma_iters": str(FMA_ITERS),
            "fma_chains": str(CHAINS),
            "reps": str(REPS),
            "min_seconds": str(MIN_SECONDS),
            "errors": json.dumps(errors),
            "sm_clock_mhz": json.dumps({k: v for k, v in clocks.items() if v is not None}),
        },
    }


def _tf32(torch: ModuleType) -> float:
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        return gemm_rate(torch, torch.float32, 8192)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]))))
