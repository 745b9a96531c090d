"""GPU workloads for the reference capture (run under ncu by capture.sh). Needs torch with CUDA.

    python workloads.py gemm --dtype fp32|tf32|fp16|bf16|fp8|fp64 --m 4096 --n 4096 --k 4096
    python workloads.py linear --batch-size 32
    python workloads.py elementwise --mode half2|half
    python workloads.py train --model resnet|transformer --batch-size 8

Each launches the measured work once after a warm-up, inside an NVTX range named after it, so
`ncu --nvtx --nvtx-include 'measure/'` profiles exactly that.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
          "fp64": torch.float64}


def gemm(args) -> None:
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    dev = "cuda"
    if args.dtype == "fp8":
        a = torch.randn(args.m, args.k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(args.n, args.k, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev)

        def run():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        a = torch.randn(args.m, args.k, device=dev, dtype=DTYPES[args.dtype])
        b = torch.randn(args.k, args.n, device=dev, dtype=DTYPES[args.dtype])

        def run():
            return a @ b
    measure(run)


def linear(args) -> None:
    layer = nn.Linear(256, 29423).cuda().eval()
    x = torch.randn(args.batch_size, 256, device="cuda")
    with torch.no_grad():
        measure(lambda: layer(x))


def elementwise(args) -> None:
    """a*b+c over 2^24 halves: torch's vectorised kernel (half2-friendly) vs a strided view that defeats it."""
    n = 1 << 24
    a, b, c = (torch.randn(n * (2 if args.mode == "half" else 1), device="cuda", dtype=torch.float16)
               for _ in range(3))
    if args.mode == "half":
        a, b, c = a[::2], b[::2], c[::2]
    measure(lambda: torch.addcmul(c, a, b))


class Block(nn.Module):
    def __init__(self, d: int = 512, heads: int = 8) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.norm1(x), self.norm1(x), self.norm1(x), need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def small_resnet() -> nn.Module:
    def block(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
    return nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1), nn.ReLU(), block(32, 64, 2), block(64, 128, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))


def train(args) -> None:
    if args.model == "resnet":
        model, x = small_resnet().cuda(), torch.randn(args.batch_size, 3, 32, 32, device="cuda")
    else:
        model, x = Block().cuda(), torch.randn(args.batch_size, 128, 512, device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        model(x).float().pow(2).mean().backward()
        opt.step()

    step()
    torch.cuda.synchronize()
    with torch.autograd.profiler.emit_nvtx(record_shapes=True):
        torch.cuda.nvtx.range_push("measure")
        step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def measure(fn) -> None:
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("measure")
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="what", required=True)
    g = sub.add_parser("gemm")
    g.add_argument("--dtype", choices=[*DTYPES, "fp8"], required=True)
    for dim in ("m", "n", "k"):
        g.add_argument(f"--{dim}", type=int, default=4096)
    sub.add_parser("linear").add_argument("--batch-size", type=int, required=True)
    sub.add_parser("elementwise").add_argument("--mode", choices=["half2", "half"], required=True)
    t = sub.add_parser("train")
    t.add_argument("--model", choices=["resnet", "transformer"], required=True)
    t.add_argument("--batch-size", type=int, required=True)
    args = p.parse_args()
    {"gemm": gemm, "linear": linear, "elementwise": elementwise, "train": train}[args.what](args)


if __name__ == "__main__":
    main()
