"""The project's own GPU captures (tests/data/gpu/<gpu>/, made by capture.sh) against analytic
counts.

Each capture profiles exactly one measured call (cudaProfilerStart/Stop around it), so a report's
FLOPs are that call's. The expected numbers come from the file names, the layer shapes and the
kernels' tile sizes (in their names), or from raw counters read here with the csv module, never from
the engine. Each test prints its measured ratio (`pytest -s`). Reports are stored xz-compressed
(flopscope reads them as they are)."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ..helpers.cli import run_cli
from ..helpers.real_files import GPU_DATA, first_launch, report_of

NO_CAPTURE = (
    "no GPU capture committed yet: run tests/data/gpu/capture.sh on a GPU"
    " (tests/data/gpu/README.md)"
)
GEMM = re.compile(
    r"^gemm_(?P<dtype>fp64|fp32|tf32|fp16|bf16|fp8)_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)$"
)
# Where each GEMM's FLOPs must land: the SIMT column for FP32 with TF32 off, a tensor column
# otherwise (FP64 GEMMs run on DMMA tensor cores from Ampere A100/Hopper on; on other GPUs they are
# SIMT DFMA).
COLUMN = {
    "fp32": ["flop_fp32"],
    "tf32": ["flop_tensor_tf32"],
    "fp16": ["flop_tensor_fp16"],
    "bf16": ["flop_tensor_bf16"],
    "fp8": ["flop_tensor_fp8"],
    "fp64": ["flop_tensor_fp64", "flop_fp64"],
}
IN_FEATURES, OUT_FEATURES = 256, 29423  # the seed's nn.Linear


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


def _captures(pattern: str) -> list:
    found = sorted(GPU_DATA.glob(f"*/{pattern}"))
    return [pytest.param(p, id=f"{p.parent.name}/{_stem(p)}") for p in found] or [
        pytest.param(None, marks=pytest.mark.skip(reason=NO_CAPTURE), id="none")
    ]


def _cli_json(*args, home: Path | None = None) -> dict:
    """`flopscope ARGS --json` as a user runs it; its JSON document."""
    out = run_cli(*args, "--json", home=home, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _reconciled(path: Path, model: str, shape: str, *flags: str) -> dict[str, dict]:
    """`flopscope reconcile` of a capture against workloads.py's MODEL, per module name."""
    doc = _cli_json(
        "reconcile",
        path,
        "--model",
        f"{GPU_DATA / 'workloads.py'}:{model}",
        "--input-shape",
        shape,
        "--train",
        *flags,
    )
    return {m["name"]: m for m in doc["modules"]}


def _tile(kernel: str) -> tuple[int, int, int] | None:
    """A GEMM kernel's (tile, tile, K-tile) from its name: cuBLAS xmma `tilesize64x128x32`, CUTLASS
    `_128x128_64x3_`, cuBLAS nvjet `_96x128_128x7_`."""
    m = re.search(r"tilesize(\d+)x(\d+)x(\d+)", kernel) or re.search(
        r"_(\d+)x(\d+)_(\d+)x\d+_", kernel
    )
    return tuple(int(g) for g in m.groups()) if m else None


def _pad(x: int, tile: int) -> int:
    return math.ceil(x / tile) * tile


def _padded_mnk(m: int, n: int, k: int, tile: tuple[int, int, int]) -> set[int]:
    """2*M'*N'*K' with M, N, K rounded up to whole tiles: the work the kernel runs, padding
    included. Which of the two tile sizes runs along M depends on the layout (cuBLAS may compute the
    transposed product), so both assignments are candidates."""
    a, b, kt = tile
    return {2 * _pad(m, a) * _pad(n, b) * _pad(k, kt), 2 * _pad(m, b) * _pad(n, a) * _pad(k, kt)}


@pytest.mark.parametrize(
    "path",
    [p for p in _captures("gemm_*.ncu-rep*") if not p.values[0] or GEMM.match(_stem(p.values[0]))],
)
def test_gemm_flops_are_2mnk(path):
    """Whole tiles: FLOPs = 2*M*N*K within 1%. Partial tiles: the counters count the padded work the
    kernel runs (zero rows included), which is exactly 2*M'*N'*K' over the tile-padded sizes."""
    spec = GEMM.match(_stem(path))
    _check_2mnk(path, spec["dtype"], *(int(spec[d]) for d in "mnk"))


@pytest.mark.parametrize("path", _captures("gemm_bf16_full.ncu-rep*"))
def test_full_set_gemm_flops_are_2mnk(path):
    """ncu's full set (rates per cycle, no tensor op counters of flopscope's set) counts the same
    padded 2*M'*N'*K': the shape is the one the profile ran, from the command its run.json
    recorded."""
    command = json.loads((path.parent / "plan" / "run_full.json").read_text())["command"]
    m, n, k = (int(command[command.index(f"--{d}") + 1]) for d in "mnk")
    _check_2mnk(path, command[command.index("--dtype") + 1], m, n, k)


def _check_2mnk(path: Path, dtype: str, m: int, n: int, k: int) -> None:
    analytic = 2 * m * n * k
    kernels = report_of(path).kernels
    assert len(kernels) == 1 and not kernels["flop"].isna().any(), "one launch, FLOPs known"
    row = kernels.iloc[0]
    ratio = row["flop"] / analytic
    where = sum(row[c] for c in COLUMN[dtype] if row[c] == row[c])
    assert where / row["flop"] > 0.99, f"{dtype} FLOPs should land in {COLUMN[dtype]}"
    tensor = row["flop_tensor"] > 0
    main = row["flop_tensor"] if tensor else row["flop"]  # the MMA or FMA loop
    tile = _tile(row["kernel_full"])
    padded = _padded_mnk(m, n, k, tile) if tile else set()
    print(
        f"\n{path.parent.name} {_stem(path)}: engine {row['flop']:.6g} FLOP, 2*M*N*K"
        f" {analytic:.6g}, ratio {ratio:.5f}; tile {tile}: padded work {sorted(padded)}, main loop"
        f" {main:.6g}"
    )
    whole_tiles = (
        all(d % t == 0 for d, t in zip((m, n, k), tile, strict=True)) if tile else m % 128 == 0
    )
    if whole_tiles:
        assert ratio == pytest.approx(1.0, rel=0.01)
    # Tensor FLOPs are the MMAs' exactly; a SIMT GEMM's FLOPs also hold its epilogue (alpha, beta: 2
    # per output, 1/K of the loop).
    tol = 1e-9 if tensor else 2.0 / k
    assert any(main == pytest.approx(p, rel=tol) for p in padded or {analytic}), (main, padded)


def _batch(path: Path) -> int:
    return int(_stem(path).removeprefix("linear_bs"))


def _linear_runs(gpu_dir: Path) -> list[tuple[int, object]]:
    runs = sorted(gpu_dir.glob("linear_bs*.ncu-rep*"), key=_batch)
    return [(_batch(p), report_of(p).kernels) for p in runs]


@pytest.mark.parametrize(
    "gpu_dir",
    sorted({p.parent for p in GPU_DATA.glob("*/linear_bs*.ncu-rep*")})
    or [pytest.param(None, marks=pytest.mark.skip(reason=NO_CAPTURE))],
)
def test_linear_flops_follow_batch_size_in_whole_tiles(gpu_dir):
    """The seed's puzzle, FLOPs that do not change with batch size, on real data: the counters count
    the work the GEMM runs, and cuBLAS runs whole tiles. nn.Linear(256, 29423) at batch 8, 16 and 32
    runs the same 32-row tile, so the same FLOPs; from batches that fill whole tiles on, FLOPs grow
    linearly and FLOPs per sample are constant. Expected: 2 x (batch, out features padded to the
    kernel's tile) x (256 MACs + the epilogue's bias add and scale, 2 FLOPs per output) from the
    tile size in the kernel's name."""
    runs = _linear_runs(gpu_dir)
    assert len(runs) >= 3
    useful = 2 * IN_FEATURES * OUT_FEATURES + OUT_FEATURES  # per sample: the MACs and the bias adds
    flops, whole = {}, []
    for bs, kernels in runs:
        assert len(kernels) == 1, "one launch per measured call"
        row = kernels.iloc[0]
        flops[bs] = row["flop"]
        tile = _tile(row["kernel_full"])
        print(
            f"\n{gpu_dir.name} bs={bs}: {row['flop']:.6g} FLOP, {row['flop'] / bs:.6g} per sample "
            f"({row['flop'] / bs / useful:.5f} of the layer's math), tile {tile}, {row['kernel']}"
        )
        # batch 1 runs a GEMV: no tiles, its reduction adds a little (12% measured on H100)
        if tile is None:
            assert 1.0 <= row["flop"] / (bs * useful) <= 1.15
            continue
        padded = {
            a: 2 * _pad(bs, a) * _pad(OUT_FEATURES, b) * (IN_FEATURES + 1)
            for a, b in (tile[:2], tile[1::-1])
        }
        batch_tile = [a for a, p in padded.items() if row["flop"] == pytest.approx(p, rel=1e-9)]
        assert batch_tile, (row["flop"], padded)
        if bs % batch_tile[0] == 0:
            whole.append(bs)
    batches = sorted(flops)
    assert all(flops[a] <= flops[b] for a, b in itertools.pairwise(batches)), (
        "FLOPs never fall as batch grows"
    )
    assert len(whole) >= 2, "at least two batches that fill whole tiles"
    per_sample = [flops[bs] / bs for bs in whole]
    slope, intercept = np.polyfit(whole, [flops[bs] for bs in whole], 1)
    print(
        f"{gpu_dir.name} whole-tile batches {whole}: {slope:.6g} FLOP/sample "
        f"({slope / useful:.5f} of the layer's math), intercept {intercept:.3g}"
    )
    assert max(per_sample) / min(per_sample) - 1 < 1e-9
    # out features padded to whole tiles: 29440 / 29423
    assert slope == pytest.approx(useful, rel=0.005)
    assert abs(intercept) < 1e-4 * slope * max(whole)


# workloads.py elementwise: 2^24 values, x = x*a + b 16 times (capture.sh)
ELEMENTWISE_FMAS = 2**24 * 16


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _per_opcode(csv_page: Path, metric: str) -> dict[str, float]:
    """One launch's `sass__..._per_opcode...` instances from ncu's raw CSV page, read without the
    engine."""
    listing = first_launch(csv_page)[metric]
    return {op: _number(n) for op, n in re.findall(r"([A-Z0-9_.]+): ([\d,]+)", listing)}


@pytest.mark.parametrize("path", _captures("elementwise_*.ncu-rep*"))
def test_fma_weighting_of_half_and_float_counters(path):
    """What the HFMA counter counts, settled on the three kernels (2^24 x 16 FMAs each):
    - FFMA: one FMA per thread instruction, 2 FLOPs: exact;
    - half2: the compiler splits the 16 HFMA2 per thread between the FMA pipe (HFMA2) and the MMA
      pipe (HFMA2.MMA), plus one HFMA2.MMA register move per thread; all count as HFMA2, 4 FLOPs
      each: 17/16;
    - scalar half: each __hfma issues as a one-lane HFMA2, which the counter cannot tell from two
      lanes: counted 4 FLOPs for 2, plus the move: 2 x 17/16.
    The HFMA2 thread instructions come from the SASS per-opcode counts of ncu's raw page, read
    here."""
    mode = _stem(path).removeprefix("elementwise_")
    row = report_of(path).kernels.iloc[0]
    modifiers = _per_opcode(
        path.with_name(f"elementwise_{mode}.csv.gz"),
        "sass__thread_inst_executed_true_per_opcode_with_modifier_all",
    )
    hfma2 = sum(n for op, n in modifiers.items() if op.startswith("HFMA2"))
    if mode == "float":
        assert row["flop_fp32"] == 2 * ELEMENTWISE_FMAS
        assert modifiers["HFMA2.MMA"] > 0 and row["flop_fp16"] == 0, (
            "the FP32 kernel's HFMA2.MMA are moves"
        )
        print(
            f"\n{path.parent.name} float: flop_fp32 / (2 x FMAs) = 1, {modifiers['HFMA2.MMA']:.0f}"
            " moves dropped"
        )
        return
    ratio = row["flop_fp16"] / (2 * ELEMENTWISE_FMAS)
    print(
        f"\n{path.parent.name} {mode}: flop_fp16 / (2 x FMAs) = {ratio:.4f}; HFMA2"
        f" {modifiers.get('HFMA2', 0):.0f} + HFMA2.MMA {modifiers.get('HFMA2.MMA', 0):.0f} thread"
        " instructions"
    )
    assert row["flop_fp16"] == 4 * hfma2
    assert modifiers["HFMA2.MMA"] > 0 and modifiers["HFMA2"] > 0
    threads = 2**23 if mode == "half2" else 2**24
    assert hfma2 == 17 * threads, "16 FMAs and one register move per thread"
    assert ratio == pytest.approx(17 / 16 if mode == "half2" else 2 * 17 / 16, rel=1e-12)
    assert "HFMA2.MMA as FP16 math" in row["provenance"]


@pytest.mark.parametrize(
    "gpu_dir",
    sorted({p.parent for p in GPU_DATA.glob("*/query_metrics.txt.gz")})
    or [pytest.param(None, marks=pytest.mark.skip(reason=NO_CAPTURE))],
)
def test_every_metric_flopscope_asks_for_exists_on_the_device(gpu_dir):
    """The metric sets against the device's own catalogue (`ncu --query-metrics` there): a name ncu
    2025.3 does not know is no error but an `(!) n/a` column (fail_bad_metric.stream.txt), so a typo
    would pass silently. Launch and device attributes are no counters: the captured raw pages hold
    them instead."""
    from flopscope.core.ncu.catalogue import (
        TENSOR_COUNTERS_BY_CC,
        parse_catalogue,
        tensor_op_metrics,
    )
    from flopscope.core.ncu.command import METRIC_SETS

    catalogue = parse_catalogue(
        gzip.decompress((gpu_dir / "query_metrics.txt.gz").read_bytes()).decode()
    )
    page = first_launch(gpu_dir / "gemm_bf16_4096x4096x4096.csv.gz")  # profiled with metrics.txt
    for name, metrics in METRIC_SETS.items():
        counters = [m for m in metrics if not m.startswith(("launch__", "device__"))]
        assert [m for m in counters if m.split(".")[0] not in catalogue] == [], name
        assert all(m in page for m in metrics if m not in counters), name
    # The table flopscope keeps per compute capability (from ncu 2024.1's offline catalogues) names
    # what the device's own ncu 2025.3 offers.
    cc = str(report_of(gpu_dir / "gemm_bf16_4096x4096x4096.ncu-rep.xz").kernels["cc"].iloc[0])
    assert tensor_op_metrics(catalogue) == TENSOR_COUNTERS_BY_CC[cc]
    if (failed := gpu_dir / "fail_bad_metric.stream.txt").exists():  # captured on the H100 only
        assert "(!) n/a" in failed.read_text()


@pytest.mark.parametrize("path", _captures("gemm_bf16_4096x4096x4096.ncu-rep*"))
def test_roofline_ceilings_come_from_the_live_peak_counters(path):
    """`--metrics roofline` collects each level's peak per cycle and its clock; the ceilings are
    their products (recomputed here from ncu's raw page), and DRAM's matches the H100 SXM datasheet,
    3.35 TB/s."""
    row = report_of(path).kernels.iloc[0]
    page = first_launch(path.with_name(_stem(path) + ".csv.gz"))
    for level, bytes_metric, clock in (
        ("dram", "dram__bytes", "dram__cycles_elapsed"),
        ("l2", "lts__t_bytes", "lts__cycles_elapsed"),
        ("l1", "l1tex__t_bytes", "l1tex__cycles_elapsed"),
    ):
        want = _number(page[f"{bytes_metric}.sum.peak_sustained"]) * _number(
            page[f"{clock}.avg.per_second"]
        )
        print(
            f"\n{path.parent.name} {level}: {row[f'report_peak_{level}_bytes_per_s'] / 1e12:.3f}"
            " TB/s"
        )
        assert row[f"report_peak_{level}_bytes_per_s"] == pytest.approx(want, rel=1e-9)
    if "h100_80gb_hbm3" in path.parent.name:
        assert row["report_peak_dram_bytes_per_s"] == pytest.approx(3.35e12, rel=0.005)
    ffma = _number(page["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"])
    assert row["report_peak_fp32_flop_per_s"] == pytest.approx(
        2 * ffma * row["sm_clock_hz"], rel=1e-9
    )


@pytest.mark.parametrize("path", _captures("gemm_bf16_4096x4096x4096.details.csv.gz"))
def test_details_page_reads_as_the_raw_page_and_the_report(path):
    """ncu's two CSV layouts and its binary report, from one profile, give one kernels table."""
    columns = ["flop", "flop_tensor_bf16", "duration_s", "dram_bytes", "l2_bytes", "l1_bytes"]
    tables = [
        report_of(path.with_name(name)).kernels[columns]
        for name in (
            path.name,
            "gemm_bf16_4096x4096x4096.csv.gz",
            "gemm_bf16_4096x4096x4096.ncu-rep.xz",
        )
    ]
    assert tables[0].iloc[0]["flop"] == 2 * 4096**3
    for other in tables[1:]:
        assert other.iloc[0].to_dict() == pytest.approx(tables[0].iloc[0].to_dict(), rel=1e-6)


def _transformer_forward_flop(batch: int, seq: int = 128, d: int = 512, heads: int = 8) -> int:
    """workloads.Block's forward: q, k, v and out projections, the MLP (d -> 4d -> d), QK^T and
    AV."""
    tokens = batch * seq
    return 2 * tokens * (4 * d * d + 2 * d * 4 * d) + 2 * 2 * batch * heads * seq * seq * (
        d // heads
    )


@pytest.mark.parametrize("path", _captures("train_transformer_*bs*.ncu-rep*"))
def test_training_step_counts_backward_twice_forward(path):
    """A whole training step, by NVTX phase: forward is the block's analytic matmul FLOPs plus a
    little elementwise work and padding, backward twice the forward (dgrad + wgrad), which a
    forward-only FLOP counter misses; every launch sits in a phase."""
    batch = int(re.search(r"bs(\d+)", path.name)[1])
    kernels = report_of(path).kernels
    nvtx = kernels["nvtx"].fillna("")
    forward = nvtx.str.startswith("measure/forward")
    backward = nvtx.str.startswith("autograd::engine")
    rest = (
        ~forward
        & ~backward
        & ~nvtx.str.startswith(
            ("measure/optimizer", "measure/zero_grad", "measure/aten::ones_like")
        )
    )
    assert not rest.any(), nvtx[rest].tolist()
    fwd, bwd = kernels.loc[forward, "flop"].sum(), kernels.loc[backward, "flop"].sum()
    analytic = _transformer_forward_flop(batch)
    print(
        f"\n{path.parent.name} {_stem(path)}: forward {fwd:.4g} ({fwd / analytic:.4f} x analytic"
        f" {analytic:.4g}), backward {bwd:.4g} ({bwd / fwd:.3f} x forward), step"
        f" {kernels['flop'].sum():.4g}"
    )
    # bf16 1.014, FP32 1.098 (SIMT tiles, FP32 elementwise) on H100
    assert 1.0 <= fwd / analytic <= 1.12
    assert 1.95 <= bwd / fwd <= 2.1


@pytest.mark.parametrize("path", _captures("train_transformer_bs8.ncu-rep*"))
def test_fp32_attention_runs_as_three_tf32_products(path):
    """With TF32 off, PyTorch's FP32 memory-efficient attention (CUTLASS fmha) still runs on tensor
    cores: as 3xTF32, each FP32 product split into big and small TF32 halves, three MMAs per
    multiply-add. Its tensor FLOPs are exactly 3 x the attention's math: forward QK^T and AV,
    backward five such products."""
    kernels = report_of(path).kernels
    batch, heads, seq, head_dim = 8, 8, 128, 64
    product = 2 * batch * heads * seq * seq * head_dim  # one of QK^T, AV, and their gradients
    for direction, products in (("fmha_cutlassF", 2), ("fmha_cutlassB", 5)):
        row = kernels[kernels["kernel"].str.startswith(direction)].iloc[0]
        print(
            f"\n{path.parent.name} {direction}: TF32 {row['flop_tensor_tf32']:.6g} = "
            f"{row['flop_tensor_tf32'] / (products * product):.4f} x {products} products"
        )
        assert row["flop_tensor_tf32"] == 3 * products * product


@pytest.mark.parametrize("path", _captures("train_transformer_bf16_bs8.ncu-rep*"))
def test_reconcile_puts_each_layer_beside_its_analytic_flops(path):
    """`flopscope reconcile` on the bf16 training step: per module, forward and backward, measured
    against torch's analytic count. Each MLP Linear's forward is 2 x tokens x 512 x 2048 (computed
    here) and its backward twice that; the capture's module ranges (forward push/pop, backward
    start/end) put every GEMM under its layer, and the measured FLOPs match within 0.5% (bias adds
    and padding)."""
    pytest.importorskip("torch")
    modules = _reconciled(path, "Block", "8,128,512", "--dtype", "bf16")
    linear = 2 * 8 * 128 * 512 * 2048
    for name in ("mlp.0", "mlp.2"):
        row = modules[name]
        print(
            f"\n{name}: forward {row['ratio_forward']:.4f}, backward {row['ratio_backward']:.4f} x"
            " analytic"
        )
        assert row["analytic_forward"] == linear and row["analytic_backward"] == 2 * linear
        assert 1.0 <= row["measured_forward"] / linear <= 1.005
        assert 1.0 <= row["measured_backward"] / (2 * linear) <= 1.005
    whole = modules[""]
    assert 1.0 <= whole["ratio_forward"] <= 1.02 and 1.0 <= whole["ratio_backward"] <= 1.03
    assert modules["attn"]["measured_backward"] > 0, (
        "backward ranges reach every module with grad inputs"
    )


@pytest.mark.parametrize(
    "home",
    sorted(GPU_DATA.glob("*/flopscope_sweep/home"))
    or [pytest.param(None, marks=pytest.mark.skip(reason=NO_CAPTURE))],
)
def test_the_h100_batch_sweep_names_the_padding(home, tmp_path):
    """`flopscope sweep` run on the H100 (flopscope_sweep/sweep.stream.txt), its store opened here:
    the points have the captured reports' FLOPs (two processes, one kernel choice), and the findings
    say why FLOPs stop following batch size: one kernel runs the same padded tiles at batch 8, 16
    and 32."""
    # opening a store may write to it: never to the committed copy
    shutil.copytree(home, tmp_path / "home")
    analysis = _cli_json("open", "linear_h100", "--no-tui", home=tmp_path / "home")["analyses"][0]
    points = {p["batch_size"]: p["flop"] for p in analysis["points"]}
    for bs, kernels in _linear_runs(home.parents[1]):
        if bs > 1:  # batch 1's GEMV did 18.8 vs 16.9 MFLOP in the two processes
            assert points[bs] == kernels["flop"].sum()
    padded = [f for f in analysis["findings"] if "tilesize32x64x8" in f]
    assert (
        len(padded) == 1 and "batch_size = 8, 16, 32" in padded[0] and "padded work" in padded[0]
    ), padded
    assert not [f for f in analysis["findings"] if "tilesize128x128x8" in f and "padded" in f]


@pytest.mark.parametrize("page", _captures("*.csv.gz"))
def test_every_raw_page_reads_as_its_report(page):
    """Each capture's raw CSV page (ncu --page raw, per-instance values included: a cuBLAS GEMM's
    per-address counts fill a 170 kB cell) against the report it was exported from: the same
    launches and numbers."""
    report = page.with_name(_stem(page) + ".ncu-rep.xz")
    if ".details" in page.name or not report.exists():
        pytest.skip("no report beside this page (details layout, or a report left out for size)")
    columns = ["flop", "duration_s", "dram_bytes", "l2_bytes", "l1_bytes"]
    from_page, from_report = report_of(page).kernels, report_of(report).kernels
    assert len(from_page) == len(from_report) > 0
    assert from_page[columns].to_numpy() == pytest.approx(
        from_report[columns].to_numpy(), rel=1e-6, nan_ok=True
    )


@pytest.mark.parametrize("path", _captures("many_launches.ncu-rep*"))
def test_a_real_many_launch_report_counts_each_launch_of_its_loop(path):
    """capture_many.sh: `flopscope profile --launch-count 869` of a loop of `x.mul_(0.999).add_(w,
    alpha=0.001)` on 2^16 floats, `x.sum()` every 8th step, after two `randn`. Every launch is read,
    in launch order, and each elementwise launch counts the loop body's math exactly: the multiply
    2^16 FLOPs, the add with alpha 2^16 FMAs, 2 x 2^16 FLOPs."""
    n, steps = 1 << 16, 408
    k = report_of(path).kernels
    assert k["launch_id"].tolist() == list(range(869))
    body = ["MulFunctor", "CUDAFunctor_add"]
    order = ["normal", "normal"] + [
        f for i in range(steps) for f in [*body, *(["reduce_kernel"] if i % 8 == 0 else [])]
    ]
    kinds = ("normal", *body, "reduce_kernel")
    assert [next((w for w in kinds if w in name), name) for name in k["kernel_full"]] == order
    for functor, flop in (("MulFunctor", n), ("CUDAFunctor_add", 2 * n)):
        launches = k[k["kernel_full"].str.contains(functor)]
        assert (
            len(launches) == steps
            and (launches["flop_fp32"] == flop).all()
            and (launches["flop"] == flop).all()
        )


def _conv_flop(batch: int, c_in: int, c_out: int, out_hw: int, k: int = 3) -> int:
    return 2 * batch * c_in * c_out * k * k * out_hw * out_hw


@pytest.mark.parametrize("path", _captures("train_resnet_bs8.ncu-rep*"))
def test_reconcile_shows_cudnn_choosing_fft_for_one_convolution(path):
    """`flopscope reconcile` on the FP32 ResNet step, per layer: the convolutions cuDNN runs as
    implicit GEMMs match 2*B*Cin*Cout*9*H*W (computed here) to 1%; the one it runs as FFT (fft2d_r2c
    and a complex GEMM) does 4.6x the direct method's FLOPs, and reconcile flags it `over`, as the
    counters measured."""
    pytest.importorskip("torch")
    modules = _reconciled(path, "small_resnet", "8,3,32,32")
    direct = {"2.0": _conv_flop(8, 32, 64, 16), "3.0": _conv_flop(8, 64, 128, 8)}  # stride 2, 3x3
    for name, flop in direct.items():
        print(
            f"\n{name}: forward {modules[name]['measured_forward'] / flop:.4f} x 2*B*Cin*Cout*9*H*W"
        )
        assert modules[name]["analytic_forward"] == flop
        assert 1.0 <= modules[name]["measured_forward"] / flop <= 1.01
    fft = modules["3.3"]
    assert fft["analytic_forward"] == _conv_flop(8, 128, 128, 8)
    kernels = report_of(path).kernels
    fft_kernels = kernels[kernels["kernel"].str.startswith("fft2d")]
    assert len(fft_kernels) and fft_kernels["nvtx"].str.contains("/3.3/").all()
    assert fft["ratio_forward"] > 4 and "over" in fft["flag"]
