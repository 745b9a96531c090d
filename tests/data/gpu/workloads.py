"""GPU workloads for the reference capture (run under ncu by capture.sh). Needs torch with CUDA.

    python workloads.py gemm --dtype fp64|fp32|tf32|fp16|bf16|fp8 --m 4096 --n 4096 --k 4096
    python workloads.py linear --batch-size 32
    python workloads.py elementwise --mode half2|half|float [--iters 16]
    python workloads.py train --model resnet|transformer --batch-size 8 [--amp bf16]

Each runs its work once to warm up, then once more between cudaProfilerStart and cudaProfilerStop
inside an NVTX range `measure`; capture.sh runs ncu with `--profile-from-start off`, so exactly that
second run is profiled. (An NVTX include filter would not do: autograd launches backward kernels
from its own thread, whose NVTX stack does not hold the main thread's `measure` range.) Each prints
one `workload:` line with the analytic FLOP count where one exists, for the reader of the stream;
tests recompute it themselves."""

from __future__ import annotations

import argparse

import torch
from torch import nn

DTYPES = {
    "fp64": torch.float64,
    "fp32": torch.float32,
    "tf32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
}
DEVICE = "cuda"


def measure(fn, sync=None) -> None:
    sync = sync or torch.cuda.synchronize
    fn()
    sync()
    torch.cuda.profiler.start()
    torch.cuda.nvtx.range_push("measure")
    fn()
    sync()
    torch.cuda.nvtx.range_pop()
    torch.cuda.profiler.stop()


def set_tf32(on: bool) -> None:
    matmul = torch.backends.cuda.matmul
    conv = torch.backends.cudnn
    # torch >= 2.9: reading or setting the legacy flag now raises
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = conv.conv.fp32_precision = "tf32" if on else "ieee"
        print(
            "fp32 matmul/conv precision:",
            matmul.fp32_precision,
            conv.conv.fp32_precision,
            flush=True,
        )
    else:
        matmul.allow_tf32 = conv.allow_tf32 = on
        print("fp32 matmul/conv allow_tf32:", on, flush=True)


def gemm(args) -> None:
    set_tf32(args.dtype == "tf32")
    m, n, k = args.m, args.n, args.k
    print(f"workload: gemm {args.dtype} {m}x{n}x{k} flop={2 * m * n * k}", flush=True)
    if args.dtype == "fp8":
        if m % 16 or n % 16 or k % 16:
            raise SystemExit("fp8: torch._scaled_mm needs M, N and K divisible by 16")
        a = torch.randn(m, k, device=DEVICE).to(torch.float8_e4m3fn)
        # column-major, as _scaled_mm wants
        b = torch.randn(n, k, device=DEVICE).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=DEVICE)
        measure(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        return
    a = torch.randn(m, k, device=DEVICE, dtype=DTYPES[args.dtype])
    b = torch.randn(k, n, device=DEVICE, dtype=DTYPES[args.dtype])
    measure(lambda: a @ b)


def linear(args) -> None:
    """The seed case: nn.Linear(256, 29423) in eval mode, FP32 (TF32 off)."""
    set_tf32(False)
    bs = args.batch_size
    print(f"workload: linear bs={bs} flop={2 * bs * 256 * 29423}", flush=True)
    layer = nn.Linear(256, 29423).to(DEVICE).eval()
    x = torch.randn(bs, 256, device=DEVICE)
    with torch.no_grad():
        measure(lambda: layer(x))


_ELEMENTWISE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void fma_half2(__half2* x, const __half2* a, const __half2* b, long n,
                                     int iters) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 v = x[i], s = a[i], t = b[i];
    for (int j = 0; j < iters; ++j) v = __hfma2(v, s, t);
    x[i] = v;
}
extern "C" __global__ void fma_half(__half* x, const __half* a, const __half* b, long n,
                                    int iters) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half v = x[i], s = a[i], t = b[i];
    for (int j = 0; j < iters; ++j) v = __hfma(v, s, t);
    x[i] = v;
}
extern "C" __global__ void fma_float(float* x, const float* a, const float* b, long n, int iters) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], s = a[i], t = b[i];
    for (int j = 0; j < iters; ++j) v = fmaf(v, s, t);
    x[i] = v;
}
"""


def elementwise(args) -> None:
    """x = x*a + b repeated `iters` times over 2^24 values: HFMA2 (half2), HFMA (half) or FFMA
    (float).

    Hand-written (CuPy/NVRTC) because torch's own elementwise kernels compute halves in FP32. The
    values are 2^24 * iters FMAs, 2 FLOPs each, whatever the instruction packs."""
    import cupy as cp

    n, iters = 1 << 24, args.iters
    print(f"workload: elementwise {args.mode} n={n} iters={iters} flop={2 * n * iters}", flush=True)
    module = cp.RawModule(code=_ELEMENTWISE, options=("-std=c++17",))
    kernel = module.get_function(f"fma_{args.mode}")
    dtype = cp.float32 if args.mode == "float" else cp.float16
    x, a, b = (cp.random.uniform(0.5, 1.0, n).astype(dtype) for _ in range(3))
    a *= dtype(0.5)
    elems = n // 2 if args.mode == "half2" else n  # half2 kernels take two halves per element
    threads = 256
    blocks = (elems + threads - 1) // threads
    measure(
        lambda: kernel((blocks,), (threads,), (x, a, b, cp.int64(elems), cp.int32(iters))),
        sync=cp.cuda.Device().synchronize,
    )


class Block(nn.Module):
    def __init__(self, d: int = 512, heads: int = 8) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def small_resnet() -> nn.Module:
    def block(cin, cout, stride):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(),
        )

    return nn.Sequential(
        nn.Conv2d(3, 32, 3, 1, 1),
        nn.ReLU(),
        block(32, 64, 2),
        block(64, 128, 2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )


def module_ranges(model: nn.Module) -> None:
    """An NVTX range per module, named as named_modules() spells it: `name` in forward,
    `backward/name` in backward. Forward ranges are push/pop ranges. Backward ones are start/end
    ranges: the backward hooks run inside emit_nvtx's push/pop range of autograd's hook node, whose
    pop would take the module's pushed name off the thread's stack instead of its own (the FP32
    training captures show `backward` with no names)."""
    nvtx = torch.cuda.nvtx
    started: dict[str, list[int]] = {}

    def push(name):  # a hook's return value replaces the module's input or output: return None
        def hook(*_):
            nvtx.range_push(name)

        return hook

    def pop(*_):
        nvtx.range_pop()

    def start(name):
        return lambda *_: started.setdefault(name, []).append(nvtx.range_start(f"backward/{name}"))

    def end(name):
        def hook(*_):
            if started.get(name):
                nvtx.range_end(started[name].pop())

        return hook

    for name, mod in model.named_modules():
        if name:
            mod.register_forward_pre_hook(push(name))
            mod.register_forward_hook(pop)
            mod.register_full_backward_pre_hook(start(name))
            mod.register_full_backward_hook(end(name))


def train(args) -> None:
    set_tf32(False)
    bs = args.batch_size
    if args.model == "resnet":
        model, x = small_resnet().to(DEVICE), torch.randn(bs, 3, 32, 32, device=DEVICE)
    else:
        model, x = Block().to(DEVICE), torch.randn(bs, 128, 512, device=DEVICE)
    print(f"workload: train {args.model} bs={bs} input={tuple(x.shape)} amp={args.amp}", flush=True)
    module_ranges(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    nvtx = torch.cuda.nvtx

    def step():
        nvtx.range_push("zero_grad")
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        nvtx.range_push("forward")
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp == "bf16"):
            loss = model(x).float().pow(2).mean()
        nvtx.range_pop()
        loss.backward()
        nvtx.range_push("optimizer")
        opt.step()
        nvtx.range_pop()

    with torch.autograd.profiler.emit_nvtx(record_shapes=True):
        measure(step)


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="what", required=True)
    g = sub.add_parser("gemm")
    g.add_argument("--dtype", choices=[*DTYPES, "fp8"], required=True)
    for dim in ("m", "n", "k"):
        g.add_argument(f"--{dim}", type=int, default=4096)
    sub.add_parser("linear").add_argument("--batch-size", type=int, required=True)
    e = sub.add_parser("elementwise")
    e.add_argument("--mode", choices=["half2", "half", "float"], required=True)
    e.add_argument("--iters", type=int, default=16)
    t = sub.add_parser("train")
    t.add_argument("--model", choices=["resnet", "transformer"], required=True)
    t.add_argument("--batch-size", type=int, required=True)
    t.add_argument(
        "--amp", choices=["off", "bf16"], default="off", help="bf16: forward under torch.autocast"
    )
    args = p.parse_args()
    print(
        "torch",
        torch.__version__,
        "cuda",
        torch.version.cuda,
        torch.cuda.get_device_name(),
        flush=True,
    )
    {"gemm": gemm, "linear": linear, "elementwise": elementwise, "train": train}[args.what](args)


if __name__ == "__main__":
    main()
