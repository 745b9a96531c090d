"""The GPU judgement is decided once, in core, and carried on the Report: the views only word it."""

from __future__ import annotations

from flopscope.core import read_report
from flopscope.core.gpu_judgement import GpuJudgement

from ..conftest import fixture_path


def test_a_gpu_option_over_a_named_device_judges_against_the_options_datasheet():
    report = read_report(fixture_path("rtx4090_torch_linear_sgemm.ncu-rep"), gpu="l4")
    assert report.gpu_judgement() == GpuJudgement(found="--gpu", against="NVIDIA L4")


def test_a_gpu_option_whose_datasheet_sets_no_ceiling_is_unused():
    # A --set full report carries its own peak counters, which win over any datasheet.
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    assert read_report(path, gpu="v100-pcie-32gb").gpu_judgement() == GpuJudgement(
        found="report", unused_option="Tesla V100-PCIE-32GB")
    assert read_report(path).gpu_judgement() == GpuJudgement(found="report")
