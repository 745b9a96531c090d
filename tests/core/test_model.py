"""`flopscope model` / `reconcile`: analytic FLOPs against published counts, PALEO arithmetic,
reconciliation.

Literature values (FMA = 2 FLOPs, so GFLOP = 2 x the GMAC figures papers and torchvision publish):
torchvision's weight metadata (`_ops`, GMAC per 224x224 image, and `num_params`;
torchvision/models/vgg.py and resnet.py): VGG16 15.47 GMAC / 138,357,544 params, VGG19 19.632 /
143,667,240, ResNet-18 1.814 / 11,689,512, ResNet-34 3.664 / 21,797,672, ResNet-50 (v1.5) 4.089 /
25,557,032. GoogLeNet: Szegedy et al. 2014 ("Going deeper with convolutions"), "1.5 billion
multiply-adds"."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from flopscope.core import FlopscopeError, find_gpu
from flopscope.core.analysis.predict import BOARDS, paleo_seconds, peak_for, predict, predict_all
from flopscope.core.analysis.reconciliation import phase, range_names, reconcile
from flopscope.core.report.meta import ReportMeta
from flopscope.core.report.report import Report, ordered
from flopscope.core.table.roofline import derive
from flopscope.tui.presentation.format import seconds as fmt_seconds
from flopscope.tui.presentation.format import si as fmt_si

from ..conftest import fixture_path
from ..helpers.cli import CLI, run_cli

try:
    import torch
    from flopscope.core.analysis.model_flops import count_factory, count_model
except ImportError:  # torch is optional: the tests that count need it, the arithmetic ones do not
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None, reason="PyTorch is not installed (pip install 'flopscope[torch]')"
)
K80_FP32, K80_FP64 = 4.37e12, 1.46e12  # one GK210, K80 board spec BD-07317-001 (board: 8.73 / 2.91)


run = partial(run_cli, clean_env=True)


# --- analytic counts against the literature
# -------------------------------------------------------------------

# name -> (published GMAC per image, published parameter count or None, relative tolerance)
PUBLISHED = {
    "vgg16": (15.47, 138_357_544, 0.01),
    "vgg19": (19.632, 143_667_240, 0.01),
    "resnet18": (1.814, 11_689_512, 0.01),
    "resnet34": (3.664, 21_797_672, 0.01),
    "resnet50": (4.089, 25_557_032, 0.01),
    # The paper's Table 1 sums to 1.50 G but lists 34M for conv1, whose own dimensions (7x7x3 -> 64
    # at 112x112) give 118M; the true architecture is 1.58 GMAC (3.17 GFLOP), 5.5 % over the rounded
    # "1.5 billion".
    "googlenet": (1.5, None, 0.06),
}


@needs_torch
@pytest.mark.parametrize("name", list(PUBLISHED))
def test_forward_flops_per_image_match_published_counts(name):
    gmac, params, rel = PUBLISHED[name]
    m = count_model(name, (1, 3, 224, 224))
    assert m.forward_flop == pytest.approx(2 * gmac * 1e9, rel=rel)
    if params is not None:
        assert m.params == params  # the layer structure is torchvision's, not just the FLOP total
    assert m.method.startswith("meta")


@needs_torch
def test_resnet50_batch32_training_on_meta_is_linear_in_batch():
    one, many = (
        count_model("resnet50", (1, 3, 224, 224), train=True),
        count_model("resnet50", (32, 3, 224, 224), train=True),
    )
    assert many.forward_flop == 32 * one.forward_flop
    assert many.backward_flop == 32 * one.backward_flop
    assert many.activation_bytes == 32 * one.activation_bytes
    # Every conv gets grad-input and grad-weight (2x forward) except conv1, whose input needs no
    # gradient.
    conv1 = one.module("conv1").forward_flop
    assert one.backward_flop == 2 * one.forward_flop - conv1
    # backward attributed down to the model itself
    assert one.module("").backward_flop == one.backward_flop
    assert one.module("fc").backward_flop == 2 * one.module("fc").forward_flop


@needs_torch
def test_vgg19_convolution_share_matches_literature():
    # Conv share = 1 - classifier MACs / total MACs = 1 - (25088*4096 + 4096*4096 + 4096*1000) /
    # 19.632e9 = 0.9937 (classifier shapes from Simonyan & Zisserman Table 1, total from
    # torchvision's 19.632 GMAC).
    literature = 1 - (25088 * 4096 + 4096 * 4096 + 4096 * 1000) / 19.632e9
    m = count_model("vgg19", (1, 3, 224, 224))
    assert m.family_share()["convolution"] == pytest.approx(literature, abs=1e-3)
    assert m.op_share()["convolution"] == pytest.approx(0.9937, abs=1e-3)
    assert set(m.op_share()) == {"convolution", "addmm"}


@needs_torch
@pytest.mark.parametrize("batch", [1, 8, 32])
def test_linear_forward_is_exactly_2bnk_bias_add_not_counted(batch):
    # FlopCounterMode counts aten.addmm as the product only: 2*B*256*29423. Counting the bias add
    # would add B*29423.
    m = count_factory(lambda: torch.nn.Linear(256, 29423), (batch, 256))
    assert m.forward_flop == 2 * batch * 256 * 29423
    assert m.forward_ops == {"addmm": 2 * batch * 256 * 29423}
    assert m.params == 256 * 29423 + 29423


@needs_torch
def test_mlp_backward_is_twice_forward():
    def mlp():
        return torch.nn.Sequential(
            torch.nn.Linear(512, 512),
            torch.nn.ReLU(),
            torch.nn.Linear(512, 512),
            torch.nn.ReLU(),
            torch.nn.Linear(512, 10),
        )

    full = count_factory(mlp, (64, 512), train=True, input_requires_grad=True)
    # grad input + grad weight, each the size of the forward product
    assert full.backward_ratio == 2.0
    usual = count_factory(mlp, (64, 512), train=True)  # training: the batch needs no gradient
    assert usual.module("2").backward_flop == 2 * usual.module("2").forward_flop
    assert usual.module("0").backward_flop == usual.module("0").forward_flop  # grad weight only
    assert usual.backward_flop == 2 * usual.forward_flop - usual.module("0").forward_flop
    # activation bytes: every leaf's output, fp32
    assert usual.activation_bytes == 64 * (512 * 4 + 10) * 4


def conv_flop(n: int, cin: int, cout: int, hw_out: tuple[int, int], k: int, groups: int = 1) -> int:
    """Hand formula: every output element is a (Cin/groups) x k x k dot product, FMA = 2 FLOPs."""
    return 2 * n * cout * hw_out[0] * hw_out[1] * (cin // groups) * k * k


@needs_torch
@pytest.mark.parametrize("groups", [1, 4, 16])  # plain, grouped, depthwise (groups = Cin = Cout)
def test_conv_backward_is_twice_forward_for_grouped_and_depthwise(groups):
    """Backward of a convolution = grad input + grad weight, each the forward's products. torch
    2.13's own formula counted grad weight `groups` times over (a depthwise layer's backward read
    17x its forward)."""

    # a first conv (its input needs no grad), then the grouped one: 16 -> 16, 3x3, stride 1, pad 1
    def net():
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, stride=2, padding=1),
            torch.nn.Conv2d(16, 16, 3, padding=1, groups=groups, bias=False),
        )

    m = count_factory(net, (2, 3, 32, 32), train=True)
    first, grouped = conv_flop(2, 3, 16, (16, 16), 3), conv_flop(2, 16, 16, (16, 16), 3, groups)
    assert (m.module("0").forward_flop, m.module("1").forward_flop) == (first, grouped)
    assert m.module("1").backward_flop == 2 * grouped  # grad input + grad weight
    assert m.module("0").backward_flop == first  # grad weight only
    assert m.backward_flop == first + 2 * grouped
    full = count_factory(net, (2, 3, 32, 32), train=True, input_requires_grad=True)
    assert full.backward_flop == 2 * (first + grouped)


@needs_torch
def test_grouped_transposed_conv_backward_is_twice_forward():
    # ConvTranspose2d(8 -> 4, groups 2, k3, stride 2): every input element meets Cout/groups x 3 x 3
    # weights.
    m = count_factory(
        lambda: torch.nn.ConvTranspose2d(8, 4, 3, stride=2, groups=2),
        (2, 8, 8, 8),
        train=True,
        input_requires_grad=True,
    )
    assert m.forward_flop == 2 * 2 * 8 * 8 * 8 * (4 // 2) * 3 * 3
    assert m.backward_flop == 2 * m.forward_flop


@needs_torch
def test_transformer_block_matches_closed_form():
    t, d = 128, 512  # 4 projections of 2*T*D^2, scores and weighted sum 2*2*T^2*D, MLP 2*2*T*D*4D
    m = count_model("transformer", (2, t, d))
    assert m.forward_flop == 2 * (24 * t * d * d + 4 * t * t * d)


@needs_torch
def test_fallback_to_cpu_batch1_scaled_for_data_dependent_models():
    class DataDependent(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(16, 8)

        def forward(self, x):
            y = self.fc(x)
            # .item() cannot run on meta tensors
            return y * (1.0 if y.abs().max().item() >= 0 else 0.0)

    m = count_factory(DataDependent, (6, 16), train=True)
    assert m.method.startswith("CPU at batch 1")
    assert m.forward_flop == 2 * 6 * 16 * 8 and m.backward_flop == 2 * 6 * 16 * 8
    assert any("meta" in n for n in m.notes)


class SdpaAfterItem(torch.nn.Module if torch else object):
    """A projection, an .item() (no meta: counted on CPU), then self-attention over 4 heads of
    16."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.lin(x).view(b, t, 4, 16).transpose(1, 2)
        scale = 1.0 if q.sum().item() > -1e30 else 0.5
        return torch.nn.functional.scaled_dot_product_attention(q, q, q) * scale


@needs_torch
def test_attention_counted_on_the_cpu_fallback():
    """On CPU, SDPA ran a kernel FlopCounterMode has no formula for: 2.1 of 10.5 MFLOP counted."""
    b, t, h, dh = 2, 128, 4, 16
    projection = 2 * b * t * 64 * 64
    attention = 2 * (2 * b * h * t * t * dh)  # Q K^T and P V
    m = count_factory(SdpaAfterItem, (b, t, 64), train=True)
    assert m.method.startswith("CPU at batch 1")
    assert m.forward_flop == projection + attention
    # backward: the projection's grad weight (its input needs none), and 4 products for dQ, dK, dV,
    # dP
    assert m.backward_flop == projection + 2 * attention
    assert count_factory(SdpaAfterItem, (b, t, 64)).forward_flop == projection + attention


@needs_torch
@pytest.mark.parametrize("causal", [False, True])
def test_attention_is_its_own_family_and_causal_counts_in_full(causal):
    """On meta (and CPU, math backend) attention runs as bmm: the 'attention' family never
    appeared."""
    from flopscope.core.analysis.model_flops import CONVENTION

    class Attention(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)

        def forward(self, x):
            b, t, _ = x.shape
            q = self.lin(x).view(b, t, 4, 16).transpose(1, 2)
            return torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=causal)

    b, t = 2, 128
    projection, attention = 2 * b * t * 64 * 64, 2 * (2 * b * 4 * t * t * 16)
    m = count_factory(Attention, (b, t, 64), train=True)
    assert m.forward_ops == {"addmm": projection, "scaled_dot_product_attention": attention}
    assert m.backward_ops == {
        "mm": projection,
        "scaled_dot_product_attention_backward": 2 * attention,
    }
    assert m.family_share() == pytest.approx(
        {
            "attention": 3 * attention / (3 * attention + 2 * projection),
            "matmul": 2 * projection / (3 * attention + 2 * projection),
        }
    )
    assert "causal attention counts in full" in CONVENTION


@needs_torch
def test_an_instance_spec_is_left_as_it_was_and_can_fall_back_to_cpu(tmp_path, monkeypatch):
    """module:instance names an nn.Module object: counting on meta moved that very object to meta,
    so the CPU retry failed with 'Tensor.item() cannot be called on meta tensors'."""
    (tmp_path / "instmods.py").write_text(
        textwrap.dedent("""
        import torch
        class Item(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(16, 8)
            def forward(self, x):
                y = self.fc(x)
                return y * (1.0 if y.abs().max().item() >= 0 else 0.0)
        item = Item()
        plain = torch.nn.Linear(16, 8)
    """)
    )
    monkeypatch.chdir(tmp_path)
    # what count_model adds (the working directory), undone after
    monkeypatch.syspath_prepend(str(tmp_path))
    m = count_model("instmods:item", (6, 16))
    assert m.method.startswith("CPU at batch 1") and m.forward_flop == 2 * 6 * 16 * 8
    m = count_model("instmods:plain", (6, 16))
    assert m.method.startswith("meta") and m.forward_flop == 2 * 6 * 16 * 8
    import instmods

    assert (
        instmods.plain.weight.device.type == "cpu" and instmods.item.fc.weight.device.type == "cpu"
    )


@needs_torch
def test_meta_failures_retry_on_cpu_only_when_meta_is_the_cause():
    built: list[str] = []  # the default device each time the factory runs

    def wrong_width():
        built.append(torch.empty(0).device.type)
        return torch.nn.Sequential(torch.nn.Linear(2000, 2000), torch.nn.Linear(16, 4))

    # A shape error fails on CPU as well: reported from the meta device, no model built with real
    # weights.
    with pytest.raises(
        FlopscopeError, match=r"forward/backward failed: RuntimeError: .*\[4, 2000\]"
    ) as caught:
        count_factory(wrong_width, (4, 2000))
    assert built == ["meta"] and "check --input-shape" in caught.value.fix

    def boom():
        raise RuntimeError("boom")

    with pytest.raises(FlopscopeError, match=r"building it failed: RuntimeError: boom$"):
        count_factory(boom, (4, 2000))

    class ItemThenBatchNorm(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc, self.bn = torch.nn.Linear(16, 16), torch.nn.BatchNorm1d(16)

        def forward(self, x):
            y = self.bn(self.fc(x))
            return y * (1.0 if y.sum().item() > -1e30 else 2.0)

    # .item() fails on meta; the CPU retry at batch 1 then fails in BatchNorm: both causes are
    # named.
    with pytest.raises(FlopscopeError) as caught:
        count_factory(ItemThenBatchNorm, (4, 16), train=True)
    assert (
        "meta device (RuntimeError: Tensor.item() cannot be called on meta tensors)"
        in caught.value.problem
    )
    assert (
        "CPU at batch 1 (ValueError: Expected more than 1 value per channel" in caught.value.problem
    )
    assert "check --input-shape" not in caught.value.fix and "leave out --train" in caught.value.fix
    # eval: BatchNorm runs
    assert count_factory(ItemThenBatchNorm, (4, 16)).forward_flop == 2 * 4 * 16 * 16


@needs_torch
def test_precision_defaults_to_the_parameters_dtype(tmp_path, monkeypatch, capsys):
    """A .half() model was reported as fp32: 4-byte parameters and the FP32 SIMT peak."""
    from flopscope.tui.cli import main as cli

    (tmp_path / "halfmods.py").write_text(
        textwrap.dedent("""
        import torch
        def half():
            return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)).half()
        def bf():
            return torch.nn.Linear(64, 64).to(torch.bfloat16)
    """)
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    params = 2 * (64 * 64 + 64)
    assert cli.main(["model", "halfmods:half", "--input-shape", "8,64", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dtype"] == "fp16" and doc["input_dtype"] == "float16"
    assert doc["param_bytes"] == 2 * params and doc["activation_bytes"] == 2 * (2 * 8 * 64)
    assert [p["peak_flop_per_s"] for p in doc["predictions"]] == pytest.approx(
        [312e12, 989.4e12], rel=1e-3
    )
    assert any("precision fp16" in n for n in doc["notes"])
    assert (
        cli.main(["model", "halfmods:half", "--input-shape", "8,64", "--dtype", "fp32", "--json"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["dtype"] == "fp32" and doc["param_bytes"] == 4 * params
    assert [p["peak_flop_per_s"] for p in doc["predictions"]] == pytest.approx(
        [19.5e12, 66.9e12], rel=1e-3
    )
    assert count_model("halfmods:bf", (8, 64)).dtype == "bf16"
    assert count_factory(lambda: torch.nn.Linear(8, 8).double(), (2, 8)).dtype == "fp64"
    assert count_factory(lambda: torch.nn.ReLU(), (2, 8)).dtype == "fp32"  # no parameters


def datasheet(key: str) -> pd.Series:
    """A GPU's row of core/data/gpus.csv, read here rather than through the code under test."""
    return (
        pd.read_csv(Path(__file__).resolve().parents[2] / "core" / "data" / "gpus.csv")
        .set_index("key")
        .loc[key]
    )


@needs_torch
@pytest.mark.parametrize("train", [False, True])
def test_fp32_convolutions_are_predicted_on_tf32_tensor_cores(tmp_path, monkeypatch, capsys, train):
    """torch runs float32 convolutions on TF32 tensor cores by default (cudnn.allow_tf32 = True) and
    matmuls on FP32 (cuda.matmul.allow_tf32 = False): fp32 predictions held every FLOP against the
    SIMT FP32 peak, so a ResNet on an A100 was predicted 8x too slow. A T4 has no TF32: all FP32
    there."""
    from flopscope.tui.cli import main as cli

    (tmp_path / "convnet.py").write_text(
        textwrap.dedent("""
        import torch
        def build():
            return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Flatten(),
                                       torch.nn.Linear(8 * 8 * 8, 10))
    """)
    )
    monkeypatch.chdir(tmp_path)
    # Batch 2, 3x8x8 in, 8 channels out at 8x8, 3x3 kernels: 2 x MACs. The input takes no gradient,
    # so the convolution's backward is its weight gradient (1x forward); the linear layer's is 2x
    # (input and weight).
    conv, linear = 2 * (2 * 8 * 8 * 8 * 3 * 3 * 3), 2 * (2 * 512 * 10)
    if train:
        conv, linear = 2 * conv, 3 * linear
    model = [
        "model",
        "convnet.py:build",
        "--input-shape",
        "2,3,8,8",
        "--json",
        *(["--train"] if train else []),
    ]
    assert (
        cli.main(
            [*model, "--gpu", "a100-sxm4-80gb", "--gpu", "h100-sxm", "--gpu", "t4", "--ppp", "0.5"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["dtype"] == "fp32" and doc["step_flop"] == conv + linear
    for p in doc["predictions"]:
        row = datasheet(p["gpu_key"])
        fp32, tf32 = row["fp32_tflops"] * 1e12, row["tf32_tensor_tflops"] * 1e12
        if p["gpu_key"] == "t4":
            assert math.isnan(tf32)
            split, at_peak = {"fp32": conv + linear}, (conv + linear) / fp32
        else:
            split, at_peak = {"tensor_tf32": conv, "fp32": linear}, conv / tf32 + linear / fp32
        assert p["compute_seconds"] == pytest.approx(at_peak / 0.5, rel=1e-12)
        assert p["peak_flop_per_s"] == pytest.approx((conv + linear) / at_peak, rel=1e-12)
        assert p["flop_by_ceiling"] == split and p["ceiling"] == "+".join(split)
    note = next(
        n for n in doc["notes"] if n.startswith("--dtype fp32 is float32 under torch's defaults")
    )
    assert (
        "convolutions on TF32 tensor cores" in note
        and "a100-sxm4-80gb 156, h100-sxm 494.7 TFLOP/s" in note
    )
    assert "t4" not in note and "matmuls and attention at the FP32 peak" in note
    # --dtype tf32 (matmuls allowed TF32 too): everything at the TF32 peak.
    assert cli.main([*model, "--gpu", "a100-sxm4-80gb", "--dtype", "tf32"]) == 0
    p = json.loads(capsys.readouterr().out)["predictions"][0]
    assert p["flop_by_ceiling"] == {"tensor_tf32": conv + linear} and p[
        "peak_flop_per_s"
    ] == pytest.approx(156e12)


def test_tf32_on_a_gpu_without_tf32_is_refused_like_bf16(capsys):
    """`model resnet18 --dtype tf32 --gpu t4 --json` printed NaN peaks and times (NaN is not JSON)
    and bound "compute", exit 0, while --dtype bf16 on a T4 was refused: every GPU the database
    gives no TF32 peak is now refused the same way, with fp32 (what torch's allow_tf32 runs there)
    as the fix."""
    from flopscope.tui.cli import main as cli

    table = pd.read_csv(Path(__file__).resolve().parents[2] / "core" / "data" / "gpus.csv")
    without = table.loc[table["tf32_tensor_tflops"].isna(), "key"].tolist()
    assert {"t4", "v100-sxm2-32gb", "p100-pcie-16gb"} <= set(without)
    for key in without:
        with pytest.raises(FlopscopeError) as caught:
            predict(1e9, find_gpu(key), "tf32")
        assert caught.value.problem == "has no tf32 peak in the GPU database (tensor_tf32)"
    if torch is None:
        return
    fixes = {
        "tf32": (
            "choose another --dtype (fp32: without TF32 units, torch runs float32 as FP32) or GPU"
        ),
        "bf16": "choose another --dtype or GPU",
    }
    for dtype, fix in fixes.items():
        assert cli.main(["model", "mlp", "--dtype", dtype, "--gpu", "t4", "--json"]) == 2
        out = capsys.readouterr()
        assert (
            out.out == ""
            and out.err
            == f"flopscope: --gpu Tesla T4: has no {dtype} peak in the GPU database"
            f" (tensor_{dtype}); {fix}\n"
        )


def _strict_json(text: str) -> dict:
    """json.loads that refuses NaN and Infinity, which Python writes and JSON has not."""

    def refuse(constant: str):
        raise AssertionError(f"{constant} in --json output")

    return json.loads(text, parse_constant=refuse)


@needs_torch
def test_model_and_reconcile_json_is_strict_json(tmp_path, capsys):
    """A step time of 5e-324 s (the smallest positive float, which --step-time takes) made
    reconcile's utilization FLOPs / (5e-324 x 14.4e12) overflow to inf, written as Infinity;
    unknowns are null."""
    from flopscope.tui.cli import main as cli

    from ..conftest import fixture_path

    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    assert (
        cli.main(["reconcile", str(path), "--model", "mlp", "--step-time", "5e-324", "--json"]) == 0
    )
    doc = _strict_json(capsys.readouterr().out)
    assert math.isinf(2 * 784 * 512 / (5e-324 * 14e12))  # what the utilization overflows to
    assert doc["utilization_analytic"] is None and doc["peak_flop_per_s"] > 0
    for gpu in ("t4", "k80", "a100-sxm4-80gb", "h100-sxm"):
        assert cli.main(["model", "mlp", "--gpu", gpu, "--json"]) == 0
        doc = _strict_json(capsys.readouterr().out)
        assert all(p["peak_flop_per_s"] > 0 and p["seconds"] > 0 for p in doc["predictions"])


@needs_torch
def test_a_model_module_that_exits_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    """sys.exit in a factory exited 0 with no output; a script's argparse at import parsed
    flopscope's own command line and printed its usage as if it were flopscope's."""
    from flopscope.tui.cli import main as cli

    (tmp_path / "exitmods.py").write_text("import sys\ndef build():\n    sys.exit(0)\n")
    (tmp_path / "needsdata.py").write_text(
        textwrap.dedent("""
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--data", required=True)
        args = parser.parse_args()
    """)
    )
    (tmp_path / "script.py").write_text(
        textwrap.dedent("""
        import argparse, torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.1)
        args = parser.parse_args()
        def build():
            return torch.nn.Linear(10, 10)
    """)
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cli.main(["model", "exitmods:build", "--input-shape", "2,10"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1
    assert out.err.startswith("flopscope: model exitmods:build: building it called sys.exit(0); ")
    assert "if __name__ == '__main__'" in out.err
    assert cli.main(["model", "needsdata:f", "--input-shape", "2,10"]) == 2
    out = capsys.readouterr()
    said = "needsdata: error: the following arguments are required: --data"
    assert out.err.count("\n") == 1
    assert f"importing needsdata called sys.exit(2) after printing '{said}'" in out.err
    # a script whose options all have defaults imports on an empty command line, not on flopscope's
    assert cli.main(["model", "script:build", "--input-shape", "2,10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["forward_flop"] == 2 * 2 * 10 * 10


@needs_torch
def test_file_path_specs(tmp_path, monkeypatch):
    """path/to/file.py:factory imports that file; `mods.py:conv` said 'run flopscope from the folder
    holding mods/py.py', `../dir/mods:conv` raised a relative-import TypeError, a missing x.json was
    'neither a built-in'."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "helpers.py").write_text("WIDTH = 8\n")
    (models / "nets.py").write_text(
        textwrap.dedent("""
        import torch
        from helpers import WIDTH  # a file beside it
        def conv():
            return torch.nn.Conv2d(3, WIDTH, 3, padding=1)
    """)
    )
    (models / "broken.py").write_text("def f(:\n")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the model's folder goes on it: undone after
    expected = conv_flop(2, 3, 8, (16, 16), 3)
    for spec in ("../models/nets.py:conv", "../models/nets:conv", f"{models}/nets.py:conv"):
        assert count_model(spec, (2, 3, 16, 16)).forward_flop == expected
    monkeypatch.chdir(models)
    assert count_model("nets.py:conv", (2, 3, 16, 16)).forward_flop == expected
    errors = {
        "nets.py:nope": (
            "model nets.py:nope: nets.py has no attribute nope; name a function or nn.Module"
            " defined in nets.py, as nets.py:NAME"
        ),
        "missing.py:f": (
            "model missing.py:f: no file missing.py; give an existing Python file, as "
            "path/to/file.py:NAME, or a module on the path, as module.path:NAME"
        ),
        "broken.py:f": (
            "model broken.py:f: cannot import broken.py: SyntaxError: invalid syntax (broken.py,"
            " line 1); fix the error broken.py raises when run (`python broken.py` shows it)"
        ),
        "nets.py": (
            "model nets.py: neither a built-in model nor module.path:factory; name the factory"
            " after a colon: nets.py:NAME"
        ),
        "x.json": "x.json: no such file; give the JSON `flopscope model --json` wrote",
    }
    for spec, line in errors.items():
        with pytest.raises(FlopscopeError) as caught:
            count_model(spec, (2, 3, 16, 16))
        assert caught.value.line() == line
    (models / "m.json").write_text("{}")
    with pytest.raises(FlopscopeError, match="is read by `reconcile --model`"):
        count_model("m.json", (2, 3, 16, 16))


class Argmax(torch.nn.Module if torch else object):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).argmax(-1)


class Detached(Argmax):
    def forward(self, x):
        return self.fc(x).detach() * 2


@needs_torch
@pytest.mark.parametrize(
    ("factory", "why"),
    [
        (torch.nn.ReLU if torch else None, "the model has no parameters"),
        (
            lambda: torch.nn.Linear(4, 4).requires_grad_(False),
            "every parameter is frozen (requires_grad=False)",
        ),
        (Argmax, "the output is int64, which has no gradient (argmax or a comparison in forward?)"),
        (
            Detached,
            (
                "the output does not depend on the trainable parameters through differentiable"
                " operations"
            ),
        ),
    ],
)
def test_train_without_gradients_says_why(factory, why):
    """The --train error blamed frozen parameters for a model with none, or with an argmax
    output."""
    with pytest.raises(FlopscopeError) as caught:
        count_factory(factory, (2, 4), train=True)
    assert caught.value.problem.startswith(f"--train: no output requires grad: {why}")
    assert "leave out --train" in caught.value.fix
    assert ("unfreeze" in caught.value.fix) == ("frozen" in why)


@needs_torch
def test_bad_model_inputs_are_one_line_errors():
    with pytest.raises(FlopscopeError, match="neither a built-in"):
        count_model("nosuchmodel")
    for shape in (None, (1, 2)):  # without a shape too: what NAME is comes before what it lacks
        with pytest.raises(
            FlopscopeError, match=r"getcwd\(\) returned str, not a torch\.nn\.Module"
        ):
            count_model("os:getcwd", shape)


@needs_torch
def test_a_spec_naming_no_model_says_so_before_asking_for_a_shape(tmp_path, capsys):
    """`model FILE:not_module` without --input-shape said "needs --input-shape", and with one "the
    factory returned int": NAME not being an nn.Module (or a function returning one) is the problem,
    whatever the shape."""
    from flopscope.tui.cli import main as cli

    models = tmp_path / "m.py"
    models.write_text(
        textwrap.dedent("""
        import torch
        not_module = 3
        def returns_int():
            return 5
        def fails():
            raise ValueError("no weights here")
        def linear():
            return torch.nn.Linear(3, 3)
    """)
    )
    problems = {
        "not_module": (
            "not_module is int, not an nn.Module or a function that returns one; name an nn.Module "
            f"or a function returning one, as {models}:NAME"
        ),
        "returns_int": (
            "returns_int() returned int, not a torch.nn.Module; NAME is an nn.Module or a function "
            "that returns one (the model)"
        ),
        "fails": "building it failed: ValueError: no weights here",
        "linear": "needs --input-shape; e.g. --input-shape 32,3",
    }  # what Linear(3, 3) takes
    for name, problem in problems.items():
        assert cli.main(["model", f"{models}:{name}"]) == 2
        assert capsys.readouterr().err == f"flopscope: model {models}:{name}: {problem}\n"
    assert cli.main(["model", f"{models}:not_module", "--input-shape", "2,3"]) == 2
    assert "not_module is int, not an nn.Module" in capsys.readouterr().err
    assert cli.main(["model", f"{models}:linear", "--input-shape", "2,3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["forward_flop"] == 2 * 2 * 3 * 3


# --- PALEO predictions (no torch)
# -----------------------------------------------------------------------------


# VGG16, GoogLeNet (1.5 GMAC), ResNet-50 forward per image
@pytest.mark.parametrize("gflop", [30.94, 3.0, 8.18])
def test_paleo_k80_per_gpu_and_per_board(gflop):
    k80 = find_gpu("Tesla K80")
    assert peak_for(k80, "fp32") == pytest.approx(K80_FP32) and peak_for(
        k80, "fp64"
    ) == pytest.approx(K80_FP64)
    flop = gflop * 1e9
    gpu_fp32 = predict(flop, k80, "fp32", ppp=1.0).seconds
    gpu_fp64 = predict(flop, k80, "fp64", ppp=1.0).seconds
    assert gpu_fp32 == pytest.approx(flop / 4.37e12)
    assert gpu_fp64 == pytest.approx(flop / 1.46e12)
    # The board is two devices: twice the peak (datasheet 8.73 / 2.91, rounding aside, as the note
    # says), half the time.
    assert "the board's 8.73 / 2.91" in BOARDS[k80.key]
    assert 2 * peak_for(k80, "fp32") == pytest.approx(8.73e12, rel=2e-3)
    assert 2 * peak_for(k80, "fp64") == pytest.approx(2.91e12, rel=4e-3)
    assert paleo_seconds(flop, 8.73e12) == pytest.approx(gpu_fp32 / 2, rel=2e-3)
    assert paleo_seconds(flop, 2.91e12) == pytest.approx(gpu_fp64 / 2, rel=4e-3)
    # PPP scales time inversely
    assert predict(flop, k80, "fp32", ppp=0.5).seconds == pytest.approx(2 * gpu_fp32)


def test_paleo_vgg16_on_k80_by_hand():
    # 30.94 GFLOP / 4.37 TFLOP/s = 7.08 ms per image on one GK210; 3.54 ms on a whole board; FP64
    # 21.2 / 10.6 ms.
    k80 = find_gpu("Tesla K80")
    assert predict(30.94e9, k80, "fp32", 1.0).seconds * 1e3 == pytest.approx(7.08, abs=0.01)
    assert paleo_seconds(30.94e9, 8.73e12) * 1e3 == pytest.approx(3.54, abs=0.01)
    assert predict(30.94e9, k80, "fp64", 1.0).seconds * 1e3 == pytest.approx(21.19, abs=0.01)
    assert paleo_seconds(30.94e9, 2.91e12) * 1e3 == pytest.approx(10.63, abs=0.01)
    # A training step at batch 32 (forward + ~2x backward) at PPP 0.5: 3 * 30.94e9 * 32 / (4.37e12 *
    # 0.5) = 1.36 s
    p = predict(3 * 30.94e9 * 32, k80, "fp32", 0.5, batch=32)
    assert p.seconds == pytest.approx(1.359, abs=1e-3) and p.per_second == pytest.approx(
        32 / p.seconds
    )


@needs_torch
def test_predictions_are_bounded_by_dram_bytes(capsys):
    """At batch 1 the MLP reads 7.47 MB of weights for 3.7 MFLOP: H100's 3.35 TB/s takes 2.23 us,
    not the 111 ns its FP32 peak x 0.5 would; at batch 4096 the same model is compute-bound."""
    from flopscope.tui.cli import main as cli

    params = (784 * 1024 + 1024) + (1024 * 1024 + 1024) + (1024 * 10 + 10)
    macs = 784 * 1024 + 1024 * 1024 + 1024 * 10
    h100_fp32, h100_dram = 66.9e12, 3350e9  # Hopper whitepaper SIMT FP32; HBM3 3.35 TB/s
    for batch, train in ((1, False), (1, True), (4096, False)):
        args = ["model", "mlp", "--input-shape", f"{batch},784", "--gpu", "h100-sxm", "--json"]
        assert cli.main(args + (["--train"] if train else [])) == 0
        p = json.loads(capsys.readouterr().out)["predictions"][0]
        # every leaf's fp32 output, ReLUs included
        activations = batch * (1024 + 1024 + 1024 + 1024 + 10) * 4
        nbytes = (4 * params + activations) * (3 if train else 1)
        # no input grad
        flop = 2 * batch * macs * (3 if train else 1) - (2 * batch * 784 * 1024 if train else 0)
        compute, memory = flop / (h100_fp32 * 0.5), nbytes / h100_dram
        assert p["bytes"] == nbytes and p["flop"] == flop
        assert p["compute_seconds"] == pytest.approx(compute) and p[
            "memory_seconds"
        ] == pytest.approx(memory)
        assert p["seconds"] == pytest.approx(max(compute, memory))
        assert p["bound"] == ("memory" if memory > compute else "compute")
        assert p["bound"] == ("compute" if batch == 4096 else "memory")
    # no bytes given: compute only
    assert predict(1e12, find_gpu("h100-sxm"), "fp32").bound == "compute"


def test_nothing_to_do_predicts_no_rate():
    """A model with no counted FLOPs and no bytes: `model --json` wrote Infinity (not JSON) and the
    table '0 s' and 'inf' samples/s."""
    from flopscope.tui.cli.model import _predictions_table

    p = predict(0, find_gpu("h100-sxm"), "fp32", nbytes=0, batch=8)
    assert p.seconds == 0 and p.per_second is None and p.steps_per_second is None
    json.dumps(p.as_dict(), allow_nan=False)  # raises on inf / nan
    specs, rows = _predictions_table([p])
    row = dict(zip((spec.title for spec in specs), rows[0], strict=True))
    assert [row["Time"], row["Bound"], row["Samples/s"]] == ["n/a"] * 3
    assert not any("inf" in cell.lower() or cell == "0 s" for cell in rows[0])


def test_fp64_predictions_use_fp64_tensor_cores_where_there_are_some():
    """DGEMM runs on FP64 tensor cores on A100/H100 (datasheets: 19.5 and 66.9 TFLOP/s, twice the
    SIMT 9.7 and 33.5); fp64 predictions used the SIMT peak. A V100 or K80 has no FP64 tensor cores:
    SIMT stays."""
    predictions, notes = predict_all(
        1e12, ["a100-sxm4-80gb", "h100-sxm", "Tesla V100-SXM2-16GB"], "fp64", ppp=1.0
    )
    a100, h100, v100 = predictions
    assert (a100.ceiling, a100.peak_flop_per_s) == ("tensor_fp64", pytest.approx(19.5e12))
    assert (h100.ceiling, h100.peak_flop_per_s) == ("tensor_fp64", pytest.approx(66.9e12))
    assert (v100.ceiling, v100.peak_flop_per_s) == ("fp64", pytest.approx(7.8e12))
    assert a100.seconds == pytest.approx(1e12 / 19.5e12)
    assert any(
        "FP64 tensor-core peak" in n and "19.5 (SIMT 9.7)" in n and "V100" not in n for n in notes
    )
    assert predict(1e12, find_gpu("Tesla K80"), "fp64").ceiling == "fp64"
    assert not any("FP64" in n for n in predict_all(1e12, ["h100-sxm"], "fp32")[1])


@needs_torch
def test_reconcile_fp64_against_the_fp64_tensor_peak():
    m = count_factory(lambda: torch.nn.Linear(64, 64).double(), (8, 64))
    assert m.dtype == "fp64"
    # an A100 report
    r = reconcile(make_report([kernel("forward", m.forward_flop)]), m, step_time_s=1e-3)
    assert (
        r.peak_flop_per_s == pytest.approx(19.5e12)
        and r.peak_source == "datasheet (NVIDIA A100-SXM4-80GB)"
    )


def test_predictions_note_k80_and_refuse_missing_precisions():
    predictions, notes = predict_all(1e12, ["Tesla K80"], "fp32")
    assert predictions[0].peak_flop_per_s == pytest.approx(K80_FP32)
    assert len(notes) == 2 and "two" in notes[0] and "ONE device" in notes[0]
    # no TF32 on a K80
    assert notes[1].startswith("--dtype fp32 is float32 under torch's defaults: matmuls")
    with pytest.raises(FlopscopeError, match="no bf16 peak"):
        predict_all(1e12, ["Tesla V100-SXM2-16GB"], "bf16")
    with pytest.raises(FlopscopeError, match="ppp"):
        predict_all(1e12, None, "fp32", ppp=0)
    predictions, notes = predict_all(1e12, None, "bf16")  # defaults have every precision
    assert [p.ceiling for p in predictions] == ["tensor_bf16", "tensor_bf16"] and not notes


# --- reconcile: a Report built from real analytic numbers
# -----------------------------------------------------

A100 = "a100-sxm4-80gb"


def make_report(rows: list[dict]) -> Report:
    """A Report from kernel rows with canonical raw columns, derived as the readers' output is."""
    gpu = find_gpu(A100)
    k = pd.DataFrame(rows)
    for col in (
        "flop_fp64",
        "flop_fp16",
        "dram_bytes",
        "l2_bytes",
        "l1_bytes",
        "dram_read_bytes",
        "dram_write_bytes",
    ):
        k[col] = k.get(col, 0.0)
    k["launch_id"] = np.arange(len(k))
    k["kernel_full"] = k["kernel"]
    k["gpu"], k["cc"], k["status"], k["estimated"], k["provenance"] = gpu.name, "8.0", "ok", "", ""
    meta = ReportMeta(source="synthetic.ncu-rep", format="synthetic", gpu=gpu.name)
    return Report(meta=meta, kernels=ordered(derive(ordered(k), gpu)), gpu=gpu)


def kernel(
    nvtx: str | None, flop: float, kernel_name: str = "implicit_gemm", duration: float = 1e-3
) -> dict:
    return {
        "nvtx": nvtx,
        "kernel": kernel_name,
        "flop_fp32": float(flop),
        "flop_tensor": 0.0,
        "duration_s": duration,
    }


@pytest.fixture(scope="module")
def resnet18_step():
    if torch is None:
        pytest.skip("PyTorch is not installed (pip install 'flopscope[torch]')")
    return count_model("resnet18", (8, 3, 224, 224), train=True)


def forward_kernels(model, scale: dict[str, float], extra: dict[str, float]) -> list[dict]:
    """One kernel per FLOP-doing leaf module under nested module ranges, as forward hooks would push
    them."""
    rows = []
    for m in model.modules:
        if (
            m.forward_flop
            and m.name
            and not any(o.name.startswith(m.name + ".") for o in model.modules)
        ):
            parts = m.name.split(".")
            path = "/".join(".".join(parts[:i]) for i in range(1, len(parts) + 1))
            factor = next((f for prefix, f in scale.items() if m.name.startswith(prefix)), 1.0)
            rows.append(kernel(f"step/forward/{path}", m.forward_flop * factor))
    for name, flop in extra.items():  # elementwise work FlopCounterMode does not count
        parts = name.split(".")
        path = "/".join(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        rows.append(kernel(f"step/forward/{path}", flop, "elementwise"))
    return rows


def test_range_names_and_phases():
    assert range_names("train:step/forward/layer1/layer1.0 | aten::linear, seq = 12") == [
        "train:step",
        "step",
        "forward",
        "layer1",
        "layer1.0",
        "aten::linear, seq = 12",
    ]
    known = {"layer1": "layer1"}
    assert phase(["step", "AddmmBackward0, stashed seq = 12"], known) == "backward"
    assert phase(["step", "backward", "layer1"], known) == "backward"
    assert phase(["optimizer.step"], known) == "optimizer"
    assert phase(["layer1"], known) == "forward"
    assert phase(["aten::conv2d, seq = 3"], known) == "forward"
    assert phase(["train_step"], known) == "other"
    assert phase([], known) == "unranged"


def test_reconcile_flags_over_and_under_counting(resnet18_step):
    m = resnet18_step
    bn_extra = 1.0e9  # e.g. batch norm and ReLU kernels counted by ncu, 0 in the analytic count
    rows = forward_kernels(m, scale={"layer3": 0.5}, extra={"layer1.0.bn1": bn_extra})
    rows.append(
        kernel("step/backward/ConvolutionBackward0, stashed seq = 7", m.backward_flop, "wgrad")
    )
    rows.append(kernel("step/optimizer.step", 5e7, "sgd"))
    rows.append(kernel(None, 0.0, "memcpy"))
    report = make_report(rows)
    r = reconcile(report, m, tol=0.1)

    layer3 = m.module("layer3").forward_flop
    assert r.measured["forward"] == pytest.approx(m.forward_flop - 0.5 * layer3 + bn_extra)
    assert r.measured["backward"] == pytest.approx(m.backward_flop)
    assert r.measured["optimizer"] == pytest.approx(5e7)
    assert r.measured["unranged"] == 0
    by_name = {row.name: row for row in r.modules}
    assert (
        by_name["layer3"].ratio_forward == pytest.approx(0.5) and by_name["layer3"].flag == "under"
    )
    assert by_name["layer1"].ratio_forward == pytest.approx(
        1 + bn_extra / m.module("layer1").forward_flop
    )
    assert by_name["layer1"].flag == "over"
    assert by_name["layer2"].ratio_forward == pytest.approx(1.0) and by_name["layer2"].flag == "ok"
    assert by_name["layer1.0.conv1"].flag == "ok"
    # analytic 0: nothing to divide by, but flagged
    assert by_name["layer1.0.bn1"].ratio_forward is None
    assert by_name["layer1.0.bn1"].flag == "over"
    assert by_name["layer1.0.bn1"].measured_forward == pytest.approx(bn_extra)
    # backward is not ranged per module here: module rows carry no backward measurement
    assert by_name["layer2"].measured_backward is None
    assert r.analytic_backward_ratio == pytest.approx(m.backward_flop / m.forward_flop)
    assert r.measured_backward_ratio == pytest.approx(m.backward_flop / r.measured["forward"])
    total = r.modules[0]
    assert total.name == "" and total.ratio_backward == pytest.approx(1.0)


def test_reconcile_utilization_of_a_training_step(resnet18_step):
    m = resnet18_step
    rows = forward_kernels(m, scale={}, extra={})
    rows.append(kernel("step/backward", m.backward_flop, "wgrad", duration=0.02))
    report = make_report(rows * 2)  # two steps captured
    # fp32 as torch runs it: the fc layer (512 -> 1000, batch 8; forward, input and weight
    # gradients) on the A100's FP32 SIMT units at 19.5 TFLOP/s, every other FLOP (convolutions) on
    # its TF32 tensor cores at 156
    fc = 3 * 2 * 8 * 512 * 1000
    peak = m.step_flop / ((m.step_flop - fc) / 156e12 + fc / 19.5e12)
    r = reconcile(report, m, steps=2, step_time_s=0.25)
    assert r.step_time_source == "--step-time" and r.peak_flop_per_s == pytest.approx(peak)
    assert r.utilization_analytic == pytest.approx(m.step_flop / (0.25 * peak))
    # measured == analytic per step here
    assert r.utilization_measured == pytest.approx(r.utilization_analytic)
    # without --step-time: the sum of kernel durations per step (an upper bound on utilization)
    r = reconcile(report, m, steps=2)
    kernel_time = report.kernels["duration_s"].sum() / 2
    assert r.step_time_s == pytest.approx(kernel_time) and "upper bound" in r.step_time_source
    assert r.utilization_analytic == pytest.approx(m.step_flop / (kernel_time * peak))


def test_reconcile_without_module_ranges_or_flop_counts_says_so(resnet18_step):
    m = resnet18_step
    rows = [
        kernel("train_step", m.step_flop),
        {**kernel("train_step", 0.0), "flop_tensor": math.nan},
    ]
    r = reconcile(make_report(rows), m)
    assert len(r.modules) == 1 and r.measured["other"] == pytest.approx(m.step_flop)
    assert any("no NVTX range names a module" in n for n in r.notes)
    assert any("1 of 2 launches have no FLOP count" in n for n in r.notes)
    assert r.utilization_measured is not None


# built-in mlp
MLP_LAYERS = {"layers.0": (784, 1024), "layers.2": (1024, 1024), "layers.4": (1024, 10)}


def mlp_kernels(batch: int) -> list[dict]:
    """One forward kernel per Linear (2*B*in*out) under its module range, and the backward by hand:
    grad weight for every layer, grad input for all but the first (the batch needs no gradient)."""
    rows = [
        kernel(f"forward/layers/{name}", 2 * batch * i * o) for name, (i, o) in MLP_LAYERS.items()
    ]
    backward = sum(
        2 * batch * i * o * (1 if name == "layers.0" else 2) for name, (i, o) in MLP_LAYERS.items()
    )
    return [*rows, kernel("backward", backward, "wgrad")]


@needs_torch
def test_reconcile_hints_train_and_steps():
    forward_only, step = count_model("mlp", (32, 784)), count_model("mlp", (32, 784), train=True)
    notes = reconcile(make_report(mlp_kernels(32)), forward_only).notes
    assert any(
        "backward ranges but the analytic count is a forward pass: pass --train" in n for n in notes
    )
    r = reconcile(make_report(mlp_kernels(32)), step)
    assert r.modules[0].ratio_backward == pytest.approx(1.0) and not any(
        "--train" in n for n in r.notes
    )
    # three steps in the report, --steps left at 1: every ratio reads 3
    r = reconcile(make_report(mlp_kernels(32) * 3), step)
    assert {round(x.ratio_forward, 6) for x in r.modules} == {3.0}
    assert any(
        "every measured figure is 3x its analytic one" in n and "pass --steps 3" in n
        for n in r.notes
    )
    r = reconcile(make_report(mlp_kernels(32) * 6), step, steps=2)
    assert any("holds 6 steps, not 2; pass --steps 6" in n for n in r.notes)
    assert not any(
        "--steps" in n for n in reconcile(make_report(mlp_kernels(32) * 3), step, steps=3).notes
    )
    half = [
        {**k, "flop_fp32": k["flop_fp32"] * (3 if "layers.0" in k["nvtx"] else 1)}
        for k in mlp_kernels(32)
    ]
    # not every row over alike
    assert not any("--steps" in n for n in reconcile(make_report(half), step).notes)


@needs_torch
def test_reconcile_without_ranges_compares_the_whole_report(tmp_path, monkeypatch, capsys):
    """A report without NVTX ranges gave no ratio at all, only 'unranged 553 kFLOP'."""
    from flopscope.core import read_report
    from flopscope.tui.cli import main as cli

    from ..conftest import fixture_path

    step = count_model("mlp", (32, 784), train=True)
    unranged = [{**k, "nvtx": None} for k in mlp_kernels(32)]
    hand = sum(k["flop_fp32"] for k in unranged)  # forward + backward by hand
    r = reconcile(make_report(unranged * 2), step, steps=2)
    assert r.measured_step == pytest.approx(hand) and r.whole_run_ratio == pytest.approx(
        hand / step.step_flop
    )
    assert r.whole_run_ratio == pytest.approx(1.0) and r.whole_run_flag == "ok"
    # phases compare instead
    assert reconcile(make_report(mlp_kernels(32)), step).whole_run_ratio is None

    # rtx4090 report: nn.Linear(16, 128) on a 128 x 16 input (2*128*16*128 FLOP), plus torch.randn's
    # kernel
    (tmp_path / "lin16.py").write_text(
        "import torch\ndef lin():\n    return torch.nn.Linear(16, 128)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = fixture_path("rtx4090_torch_linear_sgemm.ncu-rep")
    measured = read_report(path).kernels["flop"].sum()
    assert (
        cli.main(
            ["reconcile", str(path), "--model", "lin16:lin", "--input-shape", "128,16", "--json"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["whole_run_ratio"] == pytest.approx(measured / (2 * 128 * 16 * 128))
    assert (
        cli.main(
            ["reconcile", str(path), "--model", "lin16:lin", "--input-shape", "128,16", "--no-tui"]
        )
        == 0
    )
    ratio = f"{measured / (2 * 128 * 16 * 128):.2f}"
    assert (
        f"Whole report per step: measured 553 kFLOP / analytic 524 kFLOP = {ratio} (ok)"
        in capsys.readouterr().out
    )


def test_reconcile_says_why_launches_have_no_flop_count(resnet18_step):
    """A `basic` report (no FLOP counter at all) was blamed on 'not profiled, or tensor-core
    counters missing'."""
    from flopscope.core import read_report

    from ..conftest import fixture_path

    notes = reconcile(
        read_report(fixture_path("a10_spyinfer_linear_105k_basic.ncu-rep")), resnet18_step
    ).notes
    note = next(n for n in notes if "no FLOP count" in n)
    assert note.startswith(
        "105 of 105 launches have no FLOP count (105 profiled, but no FLOP counters were "
        "collected: collect them with `ncu --metrics "
    )
    assert "tensor-core counters missing" not in note
    for metric in (
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    ):
        assert metric in note
    rows = [kernel("forward", 1e9), {**kernel("forward", 1e9), "flop_tensor": math.nan}]
    report = make_report([*rows, kernel("forward", 1e9)])
    report.kernels.loc[2, ["flop", "flop_fp32", "status"]] = [math.nan, math.nan, "not profiled"]
    note = next(n for n in reconcile(report, resnet18_step).notes if "no FLOP count" in n)
    assert note.startswith(
        "2 of 3 launches have no FLOP count (1 not profiled (ncu recorded no values for them); "
        "1 profiled, but flop_tensor not collected: collect them with `ncu --metrics "
    )
    # The A100's own tensor op counters (CC 8.0 in the report), as its ncu catalogue names them.
    assert (
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in note
        and "sm__ops_path_tensor_src_tf32_dst_fp32.sum" in note
    )


@pytest.mark.parametrize(
    ("name", "header"),
    [
        ("t4_mlp_matadd_full.ncu-rep", "FP32 2.84 TFLOP/s"),
        ("a100pcie80_cutlass_gemm_full.ncu-rep", "FP32 14.4 TFLOP/s"),
    ],
)
def test_reconcile_judges_against_the_peak_report_shows(name, header):
    """reconcile took the datasheet boost peak (T4 8.1 TFLOP/s) where `flopscope report` shows the
    report's own peak counters x the measured clock (2.84): the same run read as two utilizations.
    An MLP is all matmuls, which torch runs on the FP32 units by default, so its whole step is held
    against that ceiling."""
    if torch is None:
        pytest.skip("PyTorch is not installed (pip install 'flopscope[torch]')")
    from flopscope.core import read_report

    from ..conftest import fixture_path

    path = fixture_path(name)
    report = read_report(path)
    out = run("report", path)
    assert (
        out.returncode == 0
        and re.search(rf"Ceilings( at SM [\d.]+ [GM]Hz)?: {re.escape(header)}", out.stdout)
        and "from report counters x measured clock" in out.stdout
    )
    fp32 = next(c.value for c in report.ceilings() if c.name == "fp32")
    mlp_step = count_model("mlp", (8, 784), train=True)
    r = reconcile(report, mlp_step, step_time_s=0.1)
    assert r.peak_flop_per_s == fp32 and r.peak_source == "report counters x measured clock"
    assert r.flop_by_ceiling == {"fp32": mlp_step.step_flop}
    assert fmt_si(fp32) in header
    assert r.utilization_analytic == pytest.approx(mlp_step.step_flop / (0.1 * fp32))


@needs_torch
@pytest.mark.parametrize(
    ("dtype", "column"),
    [
        ("fp16", "fp16_tensor_tflops"),
        ("tf32", "tf32_tensor_tflops"),
        ("fp64", "fp64_tensor_tflops"),
    ],
)
def test_reconcile_scales_a_datasheet_peak_to_the_measured_clock(dtype, column):
    """Without the report's own peak counters for a precision, reconcile took the datasheet peak at
    the boost clock (A100 PCIe FP16 tensor 312 TFLOP/s) while the run went at ~1.04 GHz and `report`
    scales its datasheet ceilings to that clock (about 230): the same run judged at two clocks."""
    from pathlib import Path

    from flopscope.core import read_report

    from ..conftest import fixture_path

    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    report = read_report(path)
    csv = Path(__file__).resolve().parents[2] / "core" / "data" / "gpus.csv"
    row = pd.read_csv(csv).set_index("key").loc["a100-pcie-80gb"]
    # report's run-level rule: one clock, the launches' SM clock weighted by their time
    k = report.kernels
    clock = np.average(k["sm_clock_hz"], weights=k["duration_s"])
    expected = row[column] * 1e12 * clock / (row["boost_clock_mhz"] * 1e6)
    r = reconcile(report, count_model("mlp", (8, 784)), precision=dtype)
    assert (
        r.peak_flop_per_s == pytest.approx(expected, rel=1e-9)
        and 0.7 < expected / (row[column] * 1e12) < 0.8
    )
    assert r.peak_source == "datasheet (NVIDIA A100 80GB PCIe) @ measured clock"
    out = run("reconcile", path, "--model", "mlp", "--dtype", dtype, "--no-tui")
    assert out.returncode == 0 and f"peak {fmt_si(expected)}FLOP/s" in out.stdout.replace("\n", "")
    assert "@ measured clock" in out.stdout


@needs_torch
def test_reconcile_holds_fp32_convolutions_against_tf32_as_model_predicts(
    tmp_path, monkeypatch, capsys
):
    """`model` predicts fp32 convolutions on TF32 tensor cores (torch's cudnn.allow_tf32 = True),
    matmuls on FP32; reconcile judged the whole step against the FP32 peak: resnet18 --train on this
    A100 report read as 1538%. Both ceilings are taken as `report` takes them here: FP32 from the
    report's counters (108 SMs x 64 FMA lanes x 2 FLOPs per cycle at the launches' duration-weighted
    clock), TF32 from the datasheet at their median clock."""
    from flopscope.core import read_report
    from flopscope.tui.cli import main as cli

    from ..conftest import fixture_path

    (tmp_path / "convnet.py").write_text(
        textwrap.dedent("""
        import torch
        def build():
            return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Flatten(),
                                       torch.nn.Linear(8 * 8 * 8, 10))
    """)
    )
    monkeypatch.chdir(tmp_path)
    # Batch 2, 3x8x8 in, 8x8x8 out, 3x3 kernels; training: the convolution's backward is its weight
    # gradient (1x forward, the input takes none), the linear layer's 2x (input and weight).
    conv, linear = 2 * 2 * (2 * 8 * 8 * 8 * 3 * 3 * 3), 3 * 2 * (2 * 512 * 10)
    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    k = read_report(path).kernels
    row = datasheet("a100-pcie-80gb")
    fp32 = 108 * 64 * 2 * np.average(k["sm_clock_hz"], weights=k["duration_s"])
    # one clock for the run's ceilings
    clock = np.average(k["sm_clock_hz"], weights=k["duration_s"])
    tf32 = row["tf32_tensor_tflops"] * 1e12 * clock / (row["boost_clock_mhz"] * 1e6)
    peak = (conv + linear) / (conv / tf32 + linear / fp32)
    model = ["--model", "convnet.py:build", "--input-shape", "2,3,8,8", "--train"]
    assert cli.main(["model", *model[1:], "--json"]) == 0
    (tmp_path / "convnet.json").write_text(capsys.readouterr().out)
    for spec in (model, ["--model", "convnet.json"]):  # counted now, or read from `model --json`
        assert cli.main(["reconcile", str(path), *spec, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["precision"] == "fp32" and doc["analytic_step"] == conv + linear
        assert doc["flop_by_ceiling"] == {"tensor_tf32": conv, "fp32": linear}
        assert doc["ceiling"] == "tensor_tf32+fp32"
        assert doc["peak_flop_per_s"] == pytest.approx(peak, rel=1e-9)
        assert doc["utilization_analytic"] == pytest.approx(
            (conv + linear) / (k["duration_s"].sum() * peak), rel=1e-9
        )
        assert (
            doc["peak_source"]
            == "tensor_tf32: datasheet (NVIDIA A100 80GB PCIe) @ measured clock; fp32: report"
            " counters x measured clock"
        )
        note = next(
            n
            for n in doc["notes"]
            if n.startswith("--dtype fp32 is float32 under torch's defaults")
        )
        assert (
            f"a100-pcie-80gb {tf32 / 1e12:.4g} TFLOP/s" in note
            and "harmonic mean of the two" in note
        )
    # --dtype tf32 (matmuls allowed TF32 too): the whole step at the TF32 peak
    assert cli.main(["reconcile", str(path), *model, "--dtype", "tf32", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["flop_by_ceiling"] == {"tensor_tf32": conv + linear}
    assert doc["peak_flop_per_s"] == pytest.approx(tf32, rel=1e-9)
    assert not any(n.startswith("--dtype fp32") for n in doc["notes"])


@needs_torch
def test_reconcile_counts_what_report_counts_and_says_why_the_rest_is_unknown(tmp_path):
    """gemm_v0 in this A100 CSV did 68.7 TFLOP of counted FP32 work, and (with one HFMA short of
    every tensor-pipe instruction being a register move) its tensor instructions were counted too,
    only without a checked FLOP-per-instruction factor for CC 8.0. reconcile dropped the whole
    launch ("measured 3.36 GFLOP") and blamed "flop_tensor not collected"; `report` says "FLOP ≥
    68.7 T"."""
    from flopscope.core import read_report

    from ..conftest import fixture_path
    from ..helpers.raw_csv import partial_warp_sgemm

    path = partial_warp_sgemm(fixture_path("a100_gemm_printfp_details.csv"), tmp_path / "gemm.csv")
    raw = pd.read_csv(path, thousands=",")
    raw["op"] = raw["Metric Name"].str.extract(r"op_(\w+)_pred_on\.sum$", expand=False)
    ops = raw.dropna(subset=["op"]).pivot_table(
        index="ID", columns="op", values="Metric Value", aggfunc="sum"
    )
    # FMA = 2 FLOPs; FP16 instructions are 2-lane HFMA2/HADD2/HMUL2 (ncu's half roofline: hfma x4,
    # hadd/hmul x2)
    simt = (
        2 * ops["ffma"]
        + ops["fadd"]
        + ops["fmul"]
        + 2 * ops["dfma"]
        + ops["dadd"]
        + ops["dmul"]
        + 4 * ops["hfma"]
        + 2 * ops["hadd"]
        + 2 * ops["hmul"]
    )
    expected = float(simt.sum())
    assert expected > 6.8e13  # gemm_v0's 2 x 34.4 T FFMAs: the bulk reconcile left out
    r = reconcile(read_report(path, gpu="a100-sxm4-40gb"), count_model("mlp", (1, 784)))
    assert r.measured["unranged"] == pytest.approx(expected, rel=1e-9)
    assert r.measured_step == pytest.approx(expected, rel=1e-9) and r.lower_bounds == [
        "unranged",
        "step",
    ]
    note = next(n for n in r.notes if "no FLOP count" in n)
    assert "1 of 3 launches" in note and "not collected" not in note
    assert (
        "flop_tensor unknown (tensor instructions counted, no checked FLOP/instruction for CC 8.0)"
        in note
    )
    assert "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in note and "lower bounds (≥)" in note
    out = run(
        "reconcile",
        path,
        "--model",
        "mlp",
        "--input-shape",
        "1,784",
        "--gpu",
        "a100-sxm4-40gb",
        "--no-tui",
    )
    assert out.returncode == 0, out.stderr
    assert f"Whole report per step: measured ≥ {fmt_si(expected)}FLOP / analytic" in out.stdout
    assert f"unranged ≥ {fmt_si(expected)}FLOP" in out.stdout
    report = run("report", path, "--gpu", "a100-sxm4-40gb")
    # the figure report shows for the same file
    assert f"FLOP ≥ {fmt_si(expected)}" in report.stdout


def test_edge_inputs_are_refused(resnet18_step, tmp_path, monkeypatch, capsys):
    """--depth -1 and --input-shape '' ran with exit 0; reconcile --depth 0 hid even the totals row;
    a tampered model JSON was a traceback."""
    from flopscope.tui.cli import main as cli
    from flopscope.tui.cli import model as cli_model

    reconcile_mlp = ["reconcile", "r.ncu-rep", "--model", "mlp"]
    # reconcile --tol -1 and --steps 0 both said "--steps must be >= 1 and --tol in (0, 1)": which
    # one?
    for argv, line in (
        (["model", "mlp", "--depth", "-1"], "--depth -1: a module depth is 0"),
        (
            ["model", "mlp", "--input-shape", ""],
            "--input-shape '': not a list of positive integers",
        ),
        ([*reconcile_mlp, "--depth", "-2"], "--depth -2: a module depth"),
        ([*reconcile_mlp, "--tol", "-1"], "--tol -1: a tolerance is a fraction between 0 and 1"),
        ([*reconcile_mlp, "--tol", "1"], "--tol 1: a tolerance is a fraction between 0 and 1"),
        ([*reconcile_mlp, "--tol", "nan"], "--tol nan: a tolerance is a fraction between 0 and 1"),
        ([*reconcile_mlp, "--steps", "0"], "--steps 0: a report holds 1 training step or more"),
        ([*reconcile_mlp, "--steps", "-3", "--tol", "2"], "--steps -3: a report holds 1 training"),
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"flopscope: {line}") and err.count("\n") == 1
    m = resnet18_step
    result = reconcile(make_report(forward_kernels(m, {}, {})), m)
    _, rows = cli_model.reconcile_rows(result, True, 0)
    assert [str(r[0]) for r in rows] == ["(model: phase totals)"]
    assert len(cli_model.reconcile_rows(result, True, 1)[1]) == 1 + sum(
        1 for r in result.modules if r.name and "." not in r.name
    )
    report = make_report([kernel("forward", 1e9)])
    monkeypatch.setattr(cli_model, "read_report", lambda path, gpu=None: report)
    good = m.to_json()
    tampered = {
        "forward_flop is 'abc', not a number": {**good, "forward_flop": "abc"},
        "input_shape is [], not a list of positive integers": {**good, "input_shape": []},
        "modules is not a list of modules": {**good, "modules": []},
        "modules[0] (the model): forward_flop is None": {
            **good,
            "modules": [{**good["modules"][0], "forward_flop": None}],
        },
        "modules[1] has no name and type": {
            **good,
            "modules": [good["modules"][0], {"type": "Conv2d"}],
        },
        "a list, not an object": [1, 2],
        "no params": {k: v for k, v in good.items() if k != "params"},
    }
    for problem, doc in tampered.items():
        spec = tmp_path / "tampered.json"
        spec.write_text(json.dumps(doc))
        assert cli.main(["reconcile", "r.ncu-rep", "--model", str(spec), "--no-tui"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"flopscope: {spec}: not the JSON of `flopscope model --json`: {problem}"
        )
        assert err.count("\n") == 1 and "Traceback" not in err


def test_reconcile_cli_json_reads_the_model_json(resnet18_step, tmp_path, monkeypatch, capsys):
    from flopscope.tui.cli import main as cli
    from flopscope.tui.cli import model as cli_model

    m = resnet18_step
    spec = tmp_path / "resnet18.json"
    spec.write_text(json.dumps(m.to_json()))
    report = make_report([*forward_kernels(m, {}, {}), kernel("backward", m.backward_flop)])
    monkeypatch.setattr(cli_model, "read_report", lambda path, gpu=None: report)
    assert cli.main(["reconcile", "run.ncu-rep", "--model", str(spec), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["modules"][0]["ratio_forward"] == pytest.approx(1.0)
    assert doc["measured_backward_ratio"] == pytest.approx(m.backward_ratio)
    assert "FMA = 2 FLOPs" in doc["convention"]
    assert cli.main(["reconcile", "run.ncu-rep", "--model", str(spec), "--train"]) == 2
    assert "comes from this JSON" in capsys.readouterr().err
    assert cli.main(["reconcile", "run.ncu-rep", "--model", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "layer4" in out and "Ratio = measured / analytic" in out and "Utilization" in out


# --- the command line
# -----------------------------------------------------------------------------------------


def table_at(lines: list[str], header: str) -> tuple[list[str], list[str]]:
    """The header line that starts with `header`'s first title, and the rows under it up to a line
    that is no row (a blank cell-less line or prose)."""
    at = next(
        i for i, line in enumerate(lines) if line.split()[:1] == header.split()[:1] and "  " in line
    )
    rows = []
    for line in lines[at + 1 :]:
        if "  " not in line.strip() or line.startswith(
            ("Hidden", "--dtype", "FMA", "Measured per")
        ):
            break
        rows.append(line)
    return re.split(r"\s{2,}", lines[at].strip()), rows


def readable_at_80(out: subprocess.CompletedProcess) -> list[str]:
    """Output that fits 80 columns with nothing cut; its lines."""
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in out.stdout
    return lines


@needs_torch
def test_model_tables_read_whole_at_80_columns():
    """At 80 columns the prediction table cut its headers (`Preci…`, `Sampl…`), put units under
    their values and spread `NVIDIA H100 80GB HBM3` over four lines. Now every header and row is one
    line. The MLP at batch 1 is memory bound: its bytes and DRAM bandwidths from the datasheet
    (core/data/gpus.csv) give the times."""
    lines = readable_at_80(run("model", "mlp", columns=80))
    titles, rows = table_at(lines, "GPU")
    assert [t.strip() for t in titles if t.strip()] == [
        "GPU",
        "Ceiling",
        "Peak FLOP/s",
        "DRAM B/s",
        "Time",
        "Bound",
        "Samples/s",
    ]
    params = (784 * 1024 + 1024) + (1024 * 1024 + 1024) + (1024 * 10 + 10)
    nbytes = 4 * params + (1024 + 1024 + 1024 + 1024 + 10) * 4
    assert len(rows) == 2
    for row, key in zip(rows, ("a100-sxm4-80gb", "h100-sxm"), strict=True):
        sheet = datasheet(key)
        seconds = nbytes / (sheet["dram_gb_per_s"] * 1e9)
        assert row.split() == [
            key,
            "FP32",
            *fmt_si(sheet["fp32_tflops"] * 1e12).split(),
            *fmt_si(sheet["dram_gb_per_s"] * 1e9).split(),
            *fmt_seconds(seconds).split(),
            "memory",
            *fmt_si(1 / seconds).split(),
        ]
    titles, rows = table_at(lines, "Module")
    assert [t.strip() for t in titles if t.strip()] == [
        "Module",
        "Type",
        "Fwd FLOP",
        "Params",
        "Act. bytes",
        "FLOP/B",
    ]
    assert rows[0].split()[:3] == [
        "(model)",
        "MLP",
        *fmt_si(2 * (784 * 1024 + 1024 * 1024 + 1024 * 10)).split()[:1],
    ]

    lines = readable_at_80(run("model", "resnet18", "--train", columns=80))
    titles, rows = table_at(lines, "GPU")
    assert [t.strip() for t in titles if t.strip()][:3] == ["GPU", "Ceiling", "Peak FLOP/s"]
    assert [row.split()[:2] for row in rows] == [["a100-sxm4-80gb", "TF32"], ["h100-sxm", "TF32"]]
    assert all(row.split()[2] == "TC+FP32" for row in rows)
    titles, rows = table_at(lines, "Module")
    assert [t.strip() for t in titles if t.strip()] == [
        "Module",
        "Type",
        "Fwd FLOP",
        "Bwd FLOP",
        "Params",
        "Act. bytes",
        "FLOP/B",
    ]
    assert rows[0].split()[:2] == ["(model)", "ResNet"] and any(
        r.split()[0] == "layer4.1" for r in rows
    )


@needs_torch
@pytest.mark.parametrize("train", [False, True])
def test_reconcile_table_reads_whole_at_80_columns(train):
    """The MLP's forward is 2 x (784x1024 + 1024x1024 + 1024x10) FLOPs; a training step adds its
    backward without the input's gradient: 2x for the last two layers, 1x for the first."""
    forward = 2 * (784 * 1024 + 1024 * 1024 + 1024 * 10)
    backward = 2 * forward - 2 * 784 * 1024
    out = run(
        "reconcile",
        fixture_path("t4_mlp_matadd_full.ncu-rep"),
        "--model",
        "mlp",
        "--no-tui",
        *(["--train"] if train else []),
        columns=80,
    )
    lines = readable_at_80(out)
    titles, rows = table_at(lines, "Module")
    shown = [t.strip() for t in titles if t.strip()]
    assert shown[0] == "Module" and shown[-1] == "Flag" and "Fwd analytic" in shown
    assert ("Bwd analytic" in shown) == train
    cells = re.split(r"\s{2,}", rows[0].strip())
    assert cells[0] == "(model: phase totals)" and fmt_si(forward) in cells
    assert (fmt_si(backward) in cells) == train
    if train:  # Type no longer fits: said, not silently gone
        assert "Hidden at 80 columns: Type; widen or use --json" in lines


@needs_torch
def test_model_json_shape():
    out = run(
        "model",
        "resnet50",
        "--input-shape",
        "32,3,224,224",
        "--train",
        "--gpu",
        "K80",
        "--gpu",
        "Tesla V100-SXM2-16GB",
        "--ppp",
        "0.5",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {
        "forward_flop",
        "backward_flop",
        "params",
        "activation_bytes",
        "modules",
        "op_share",
        "predictions",
        "convention",
    } <= set(doc)
    assert doc["forward_flop"] == pytest.approx(32 * 8.178e9, rel=1e-3)
    assert 1.9 < doc["backward_flop"] / doc["forward_flop"] < 2.0
    assert {"name", "type", "forward_flop", "backward_flop", "params"} <= set(doc["modules"][0])
    assert sum(doc["op_share"].values()) == pytest.approx(1.0)
    assert "FMA = 2 FLOPs" in doc["convention"]
    k80, v100 = doc["predictions"]
    assert {"gpu", "precision", "ppp", "seconds", "per_second"} <= set(k80)
    step = doc["forward_flop"] + doc["backward_flop"]
    assert k80["seconds"] == pytest.approx(step / (4.37e12 * 0.5))
    assert v100["seconds"] == pytest.approx(step / (15.7e12 * 0.5))
    assert any("K80" in n for n in doc["notes"])


@needs_torch
def test_ctrl_c_during_model_says_just_stopped(tmp_path):
    """It said 'stopped (ncu and the program it profiled were stopped too)': `model` runs no ncu."""
    import signal
    import time

    (tmp_path / "slow.py").write_text(
        textwrap.dedent("""
        import pathlib, time, torch
        class Slow(torch.nn.Module):
            def forward(self, x):
                pathlib.Path("started").touch()
                time.sleep(60)
                return x
    """)
    )
    proc = subprocess.Popen(
        [*CLI, "model", "slow:Slow", "--input-shape", "2,4"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while (
        not (tmp_path / "started").exists() and time.monotonic() < deadline and proc.poll() is None
    ):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "flopscope: stopped\n" and out == ""


@needs_torch
def test_model_table_user_factory_and_errors(tmp_path):
    (tmp_path / "mymodels.py").write_text(
        textwrap.dedent("""
        import torch
        def tiny():
            return torch.nn.Sequential(
                torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)
            )
    """)
    )
    out = run("model", "mymodels:tiny", "--input-shape", "16,32", "--gpu", "K80", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (
        "FMA = 2 FLOPs" in out.stdout and "Tesla K80" in out.stdout and "ONE device" in out.stdout
    )
    assert "arithmetic intensity" in out.stdout
    out = run("model", "vgg16", "--dtype", "bf16", "--gpu", "Tesla V100-SXM2-16GB")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no bf16 peak" in out.stderr
    assert "Traceback" not in out.stderr


BLOCK_TORCH = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'")
sys.meta_path.insert(0, NoTorch())
import flopscope.core, flopscope.core.analysis.predict, flopscope.core.analysis.reconciliation
import flopscope.core.analysis.model_flops
from flopscope.tui.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_torch_model_is_a_one_line_error():
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_TORCH, "model", "vgg16", "--input-shape", "1,3,224,224"],
        capture_output=True,
        text=True,
        env={"PATH": ""},
    )
    assert out.returncode == 2, out.stderr
    assert (
        out.stderr == "flopscope: flopscope model needs PyTorch: pip install 'flopscope[torch]'\n"
    )
    assert out.stdout == ""


async def test_reconcile_screen_shows_the_cli_rows(resnet18_step):
    """The app's reconcile screen holds the same rows as the CLI table."""
    from flopscope.tui.app.app import FlopscopeApp
    from flopscope.tui.app.screens.reconcile import ReconcileScreen
    from flopscope.tui.app.widgets.kernel_table import KernelTable
    from flopscope.tui.cli.model import _reconcile_lines, reconcile_rows

    m = resnet18_step
    rows = forward_kernels(m, scale={"layer3": 0.5}, extra={})
    rows.append(
        kernel("step/backward/ConvolutionBackward0, stashed seq = 7", m.backward_flop, "wgrad")
    )
    result = reconcile(make_report(rows), m, tol=0.1)
    titles, cells = reconcile_rows(result, True, None)
    app = FlopscopeApp(ReconcileScreen("reconcile", result, _reconcile_lines(result), True))
    async with app.run_test(size=(200, 24)) as pilot:
        await pilot.pause(0.1)
        model = app.screen.query_one(KernelTable).model
        assert len(model) == len(result.modules) == len(cells)
        assert [c.title for c in model.columns] == titles
        assert model.cells(0) == [str(c) for c in cells[0]]
        # layer3 measured at half its analytic FLOPs
        assert any("under" in str(c[-1]) for c in cells)
        await pilot.press("q")


def test_reconcile_says_when_the_measured_precision_is_not_the_peaks():
    """The V100 CUTLASS report is all FP16 tensor work (Volta HMMA): utilization against the FP32
    peak would read as 285%. The note names the precision that ran and the --dtype to pass; with it,
    no note."""
    if torch is None:
        pytest.skip("PyTorch is not installed (pip install 'flopscope[torch]')")
    from flopscope.core import read_report

    from ..conftest import fixture_path

    report = read_report(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    notes = reconcile(report, count_model("mlp", (8, 784))).notes
    assert any(
        "ran as tensor_fp16, but utilization is against the fp32 peak: pass --dtype fp16" in n
        for n in notes
    )
    notes = reconcile(report, count_model("mlp", (8, 784), dtype="fp16")).notes
    assert not any("utilization is against" in n for n in notes)


def test_reconcile_takes_dtype_with_a_model_json(tmp_path, capsys):
    """The note above suggests --dtype; with a model JSON, --dtype was refused ('come from this
    JSON')."""
    if torch is None:
        pytest.skip("PyTorch is not installed (pip install 'flopscope[torch]')")
    from flopscope.tui.cli import main as cli

    from ..conftest import fixture_path

    spec = tmp_path / "mlp.json"
    spec.write_text(json.dumps(count_model("mlp", (8, 784)).to_json()))
    path = fixture_path("v100_cutlass_gemm_nersc_flops_details.csv")
    assert cli.main(["reconcile", str(path), "--model", str(spec), "--json"]) == 0
    assert any("pass --dtype fp16" in n for n in json.loads(capsys.readouterr().out)["notes"])
    assert (
        cli.main(["reconcile", str(path), "--model", str(spec), "--dtype", "fp16", "--json"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["precision"] == "fp16" and doc["analytic"]["dtype"] == "fp32"
    # V100 PCIe datasheet FP16 tensor 112 TFLOP/s at its 1380 MHz boost, scaled to the clock the CSV
    # measured
    rows = pd.read_csv(path, skiprows=10, thousands=",")
    by_launch = rows.pivot_table(
        index="ID", columns="Metric Name", values="Metric Value", aggfunc="first"
    )
    rate, cycles = (
        by_launch["sm__cycles_elapsed.avg.per_second"],
        by_launch["sm__cycles_elapsed.avg"],
    )
    # weighted by each launch's time: the run's one clock
    clock = np.average(rate, weights=cycles / rate)
    assert doc["peak_flop_per_s"] == pytest.approx(112e12 * clock / 1380e6, rel=1e-3)
    assert doc["peak_source"] == "datasheet (Tesla V100-PCIE-32GB) @ measured clock"
    assert not any("utilization is against" in n for n in doc["notes"])
    assert (
        cli.main(["reconcile", str(path), "--model", str(spec), "--train", "--dtype", "fp16"]) == 2
    )
    assert "--train comes from this JSON" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_step_time_must_be_a_positive_time(value, tmp_path):
    out = subprocess.run(
        [*CLI, "reconcile", "x.csv", "--model", "mlp", "--step-time", value],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2 and "--step-time" in out.stderr and "Traceback" not in out.stderr


# --- inputs that are not floats, imports that fail, --train on frozen models
# ------------------------------------
@needs_torch
def test_token_id_models_count_with_input_dtype_int64():
    """An nn.Embedding first takes integer ids; the lookup is 0 FLOPs, the linear head
    2*B*S*64*10."""

    def emb() -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Embedding(1000, 64), torch.nn.Linear(64, 10))

    with pytest.raises(FlopscopeError) as caught:
        count_factory(emb, (4, 16), name="emb")
    assert "'indices'" in caught.value.problem  # torch's own words
    assert (
        caught.value.fix
        == "the model takes integer ids (an nn.Embedding first?): pass --input-dtype int64"
    )
    for dtype in ("int64", "long", "int32"):
        m = count_factory(emb, (4, 16), input_dtype=dtype)
        assert m.forward_flop == 2 * 4 * 16 * 64 * 10
        assert m.input_dtype == {"long": "int64"}.get(dtype, dtype)
    trained = count_factory(emb, (4, 16), train=True, input_dtype="int64", input_requires_grad=True)
    # grads of the head's input and weight; ids take none
    assert trained.backward_flop == 2 * trained.forward_flop


@needs_torch
def test_an_input_dtype_the_parameters_do_not_have_is_refused():
    """`model mlp --input-dtype int64` (or float16) counted 3.72 MFLOP and exited 0: the meta device
    checks no dtypes, while CPU and CUDA refuse a matrix product or convolution of mixed dtypes.
    Token ids into an nn.Embedding, and a model that casts its input itself, still count."""
    for layer, shape in ((torch.nn.Linear(8, 4), (2, 8)), (torch.nn.Conv2d(3, 4, 3), (1, 3, 8, 8))):
        for dtype in (torch.int64, torch.float16):  # what real (CPU) tensors do: refuse
            with pytest.raises(RuntimeError, match=r"should be the same|must have the same dtype"):
                layer(torch.zeros(shape, dtype=dtype))
    fixes = {
        ("int64", "long int"): (
            "the model takes floating-point input: leave out --input-dtype (it defaults to "
            "the parameters')"
        ),
        ("float16", "c10::Half"): (
            "the input must have the parameters' dtype: leave out --input-dtype (it "
            "defaults to theirs)"
        ),
    }
    for (dtype, c10), fix in fixes.items():
        # Without a bias (as in a ResNet) the meta convolution checks nothing; with one, it checks
        # the bias in torch's own words: either way the fix names --input-dtype
        for factory, shape, op in (
            (lambda: torch.nn.Linear(8, 4), (2, 8), "addmm"),
            (lambda: torch.nn.Conv2d(3, 4, 3, bias=False), (1, 3, 8, 8), "convolution"),
            (lambda: torch.nn.Conv2d(3, 4, 3), (1, 3, 8, 8), ""),
        ):
            with pytest.raises(FlopscopeError) as caught:
                count_factory(factory, shape, input_dtype=dtype, name="m")
            both = " and ".join(sorted(("float32", dtype)))
            ours = (
                f"{op}: operands must have one dtype, but got {both} (as CPU and CUDA kernels"
                " require)"
            )
            torchs = f"Input type ({c10}) and bias type (float) should be the same"
            assert (
                caught.value.problem
                == f"forward/backward failed: RuntimeError: {ours if op else torchs}"
            )
            assert caught.value.fix == fix
    # backward's products are checked too: a float64 weight gradient meets float32
    for train in (False, True):
        with pytest.raises(
            FlopscopeError, match="operands must have one dtype, but got float32 and float64"
        ):
            count_factory(
                lambda: torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8).double()),
                (2, 8),
                train=train,
            )

    class Casting(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(8, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x.float())

    assert count_factory(Casting, (2, 8), input_dtype="int64").forward_flop == 2 * 2 * 8 * 4
    emb = count_factory(
        lambda: torch.nn.Sequential(torch.nn.Embedding(10, 8), torch.nn.Linear(8, 4)),
        (2, 5),
        input_dtype="int64",
        train=True,
    )
    assert (emb.forward_flop, emb.backward_flop) == (2 * 2 * 5 * 8 * 4, 2 * 2 * 2 * 5 * 8 * 4)


@needs_torch
@pytest.mark.parametrize("dtype", ["int64", "float16"])
def test_model_cli_refuses_an_input_dtype_the_parameters_do_not_have(dtype):
    out = run("model", "mlp", "--input-dtype", dtype, "--json")
    assert (
        out.returncode == 2
        and out.stdout == ""
        and out.stderr.count("\n") == 1
        and "Traceback" not in out.stderr
    )
    both = " and ".join(sorted(("float32", dtype)))
    assert out.stderr.startswith(
        "flopscope: model mlp: forward/backward failed: RuntimeError: addmm: operands must "
        f"have one dtype, but got {both} (as CPU and CUDA kernels require); "
    )
    assert "leave out --input-dtype" in out.stderr


@needs_torch
def test_model_cli_input_dtype_import_fix_and_frozen_train(tmp_path):
    (tmp_path / "tokens.py").write_text(
        textwrap.dedent("""
        import torch
        def emb():
            return torch.nn.Sequential(torch.nn.Embedding(1000, 64), torch.nn.Linear(64, 10))
        def frozen():
            return torch.nn.Linear(8, 8).requires_grad_(False)
    """)
    )
    (tmp_path / "broken.py").write_text("import no_such_dependency\n")
    out = run(
        "model",
        "tokens:emb",
        "--input-shape",
        "4,16",
        "--input-dtype",
        "long",
        "--json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["forward_flop"] == 2 * 4 * 16 * 64 * 10 and doc["input_dtype"] == "int64"
    out = run("model", "tokens:emb", "--input-shape", "4,16", cwd=tmp_path)
    assert (
        out.returncode == 2
        and out.stderr.count("\n") == 1
        and "pass --input-dtype int64" in out.stderr
    )
    out = run("model", "tokens:frozen", "--input-shape", "4,8", "--train", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("flopscope: model tokens:frozen: --train: no output requires grad")
    assert "leave out --train" in out.stderr
    out = run("model", "nosuchmodule:f", "--input-shape", "4,8", cwd=tmp_path)
    assert (
        out.stderr
        == "flopscope: model nosuchmodule:f: cannot import nosuchmodule: ModuleNotFoundError: No"
        " module named 'nosuchmodule'; run flopscope from the folder holding nosuchmodule.py, or"
        " add that folder to PYTHONPATH\n"
    )
    out = run("model", "broken:f", "--input-shape", "4,8", cwd=tmp_path)
    assert out.returncode == 2 and "broken needs no_such_dependency: install it" in out.stderr
