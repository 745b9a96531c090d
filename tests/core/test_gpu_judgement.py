"""The GPU judgement is decided once, in core, and carried on the Report: the views only word it."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.core.report.judgement import DeviceJudgement, GpuJudgement
from flopscope.core.report.report import with_gpu
from flopscope.tui.presentation.text_report import header

from ..conftest import fixture_path
from ..helpers.multi_gpu import A100, H100, two_gpus


def test_a_gpu_option_over_a_named_device_judges_against_the_options_datasheet():
    report = read_report(fixture_path("rtx4090_torch_linear_sgemm.ncu-rep"), gpu="l4")
    assert report.gpu_judgement() == GpuJudgement(
        gpu="NVIDIA GeForce RTX 4090", compute_capability="8.9", found="--gpu", against="NVIDIA L4"
    )


def test_a_gpu_option_whose_datasheet_sets_no_ceiling_is_unused():
    # A --set full report carries its own peak counters, which win over any datasheet.
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    v100 = {"gpu": "Tesla V100-SXM2-32GB", "compute_capability": "7.0"}
    assert read_report(path, gpu="v100-pcie-32gb").gpu_judgement() == GpuJudgement(
        **v100, found="report", unused_option="Tesla V100-PCIE-32GB"
    )
    assert read_report(path).gpu_judgement() == GpuJudgement(**v100, found="report")


def test_each_device_of_a_multi_gpu_file_is_judged_once_in_core(tmp_path):
    # two_gpus: each of its 2 kernels once on the A100 and twice on the H100; --gpu fits the A100's
    # CC only.
    path = two_gpus(tmp_path).meta.source
    a100_sxm = "NVIDIA A100-SXM4-80GB"
    assert read_report(path, gpu="a100-sxm4-80gb").gpu_judgement() == GpuJudgement(
        gpu=H100,
        compute_capability="9.0",
        found="report",
        devices=(
            DeviceJudgement(H100, "9.0", 4),
            DeviceJudgement(A100, "8.0", 2, against=a100_sxm),
        ),
    )
    assert read_report(path).gpu_judgement().devices == (
        DeviceJudgement(H100, "9.0", 4),
        DeviceJudgement(A100, "8.0", 2),
    )
    # The header words the decided devices, and reads nothing else to name them.
    assert (
        header(with_gpu(read_report(path), "a100-sxm4-80gb")).gpu
        == f"{H100} (CC 9.0, 4 launches) + {A100} (CC 8.0, 2 launches, judged against {a100_sxm}"
        " ceilings (--gpu))"
    )
