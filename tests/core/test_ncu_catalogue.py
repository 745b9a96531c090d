"""The metrics flopscope asks ncu for exist on the GPU: checked against ncu's own catalogues per
chip.

The catalogues in tests/data/ncu_cli are real `ncu --query-metrics --csv --chips CHIP` output (ncu
2024.1.1; README there). Expected tensor counters below are read off those files by eye, not
computed by the code."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.ncu.catalogue import parse_catalogue, tensor_counters_for, tensor_op_metrics
from flopscope.core.ncu.command import METRIC_SETS, ProfileOptions, metric_list, ncu_argv

from ..helpers.raw_csv import one_launch

DATA = Path(__file__).parents[1] / "data" / "ncu_cli"
CHIPS = ("gv100", "tu104", "ga100", "ga102", "ad102", "gh100")
# Not hardware counters: ncu lists them under other --query-metrics-collection values, and collects
# them.
NOT_IN_COUNTER_CATALOGUE = ("launch__", "device__")


def catalogue(chip: str) -> set[str]:
    with gzip.open(DATA / f"query_metrics_csv_{chip}.csv.gz", "rt") as f:
        return parse_catalogue(f.read())


@pytest.mark.parametrize("chip", CHIPS)
def test_every_counter_of_every_metric_set_exists_on_the_chip(chip):
    names = catalogue(chip)
    asked = {m for metrics in METRIC_SETS.values() for m in metrics} | set(tensor_op_metrics(names))
    missing = [
        m
        for m in sorted(asked)
        if not m.startswith(NOT_IN_COUNTER_CATALOGUE) and m.split(".")[0] not in names
    ]
    assert missing == []


TENSOR = {
    "gv100": {"fp16_dst_fp16", "fp16_dst_fp32"},
    "tu104": {"fp16_dst_fp16", "fp16_bf16_tf32_dst_fp32"},
    "ga100": {"bf16_dst_fp32", "fp16_dst_fp16", "fp16_dst_fp32", "fp64", "tf32_dst_fp32"},
    "ad102": {"bf16_dst_fp32", "fp16_dst_fp16", "fp16_dst_fp32", "fp64", "fp8", "tf32_dst_fp32"},
    # fp16 only as an aggregate here
    "gh100": {"bf16_dst_fp32", "fp16", "fp64", "fp8", "tf32_dst_fp32"},
}


@pytest.mark.parametrize("chip", sorted(TENSOR))
def test_tensor_counters_cover_each_float_source_once(chip):
    chosen = {
        m.removeprefix("sm__ops_path_tensor_src_").removesuffix(".sum")
        for m in tensor_op_metrics(catalogue(chip))
    }
    assert chosen == TENSOR[chip]


def test_plain_and_csv_catalogues_read_alike():
    with gzip.open(DATA / "query_metrics_gh100.txt.gz", "rt") as f:
        plain = parse_catalogue(f.read())
    assert plain == catalogue("gh100")
    assert "dram__bytes" in plain and len(plain) > 3000


def test_no_catalogue_means_no_tensor_counters():
    assert parse_catalogue((DATA / "query_metrics_no_driver.stream.txt").read_text()) == set()
    assert tensor_op_metrics(set()) == []


def test_argv_has_no_double_dash_and_the_program_follows_the_options():
    opts = ProfileOptions(
        command=["python", "train.py", "--", "--lr", "3"], tensor_metrics=["a__b.sum"]
    )
    argv = ncu_argv(opts, "/tmp/r")
    # the program's own `--` is its business
    assert argv[-5:] == ["python", "train.py", "--", "--lr", "3"]
    assert "--" not in argv[:-5]
    assert "a__b.sum" in argv[argv.index("--metrics") + 1].split(",")
    assert "a__b.sum" not in (
        metric_list(ProfileOptions(command=["x"], metrics="memory", tensor_metrics=["a__b.sum"]))
        or []
    )


def test_a_program_that_looks_like_an_option_is_refused():
    with pytest.raises(FlopscopeError, match="read as its own option"):
        ncu_argv(ProfileOptions(command=["--version"]), "/tmp/r")


def test_aggregate_and_per_destination_counters_are_not_added_twice(tmp_path):
    # A raw page holding GH100's aggregate next to per-destination counters of the same source type,
    # as a report made with a wider --metrics list could: one launch of 2*4096^3 tensor FLOPs.
    flop = 2 * 4096**3
    cols = {
        "gpu__time_duration.sum": ("nsecond", 1_000_000),
        "sm__ops_path_tensor_src_fp16.sum": ("", flop),
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": ("", flop),
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": ("", 0),
    }
    row = read_report(one_launch(tmp_path / "raw.csv", cols, kernel="sm90_xmma_gemm")).kernels.iloc[
        0
    ]
    assert row["flop_tensor"] == flop
    assert row["flop_tensor_fp16"] == flop


# Blackwell's tensor counters, named as public ncu-based tooling lists them for ncu 2025 (ncu
# 2024.1.1, which captured the catalogues here, knows no Blackwell chip): counters of several source
# types hold the ops of the narrower ones, e.g. `src_fp4_fp6_fp8_dst_fp32` those of
# `src_fp4_fp6_dst_fp32` and `src_fp4_dst_fp32`.
BLACKWELL = {
    f"sm__ops_path_tensor_src_{s}"
    for s in (
        "fp4_dst_fp32",
        "fp4_fp6_dst_fp16",
        "fp4_fp6_dst_fp32",
        "fp4_fp6_fp8_dst_fp16",
        "fp4_fp6_fp8_dst_fp32",
        "fp8_sparsity_off",
        "fp8_sparsity_on",
        "fp16",
        "bf16_dst_fp32",
        "tf32_dst_fp32",
        "fp64",
        "int8",
    )
}


def test_nested_source_families_are_collected_once():
    chosen = {
        m.removeprefix("sm__ops_path_tensor_src_").removesuffix(".sum")
        for m in tensor_op_metrics(BLACKWELL)
    }
    assert chosen == {
        "fp4_fp6_fp8_dst_fp16",
        "fp4_fp6_fp8_dst_fp32",
        "fp16",
        "bf16_dst_fp32",
        "tf32_dst_fp32",
        "fp64",
    }


def test_nested_source_families_are_read_once(tmp_path):
    # An FP4 GEMM of 2*4096^3 FLOPs seen by every counter that includes FP4 sources.
    flop = 2 * 4096**3
    names = ["fp4_dst_fp32", "fp4_fp6_dst_fp32", "fp4_fp6_fp8_dst_fp32"]
    cols = {
        "gpu__time_duration.sum": ("nsecond", 1_000_000),
        **{f"sm__ops_path_tensor_src_{n}.sum": ("", flop) for n in names},
    }
    row = read_report(
        one_launch(tmp_path / "raw.csv", cols, cc="10.0", kernel="fp4_gemm")
    ).kernels.iloc[0]
    assert row["flop_tensor"] == flop
    assert "ncu counts fp4/fp6/fp8 together" in row["provenance"]


def test_partly_overlapping_counters_are_not_both_collected():
    # An FP8 aggregate next to a family counter that also holds FP8 ops (to FP32): summing both
    # would count the FP8-to-FP32 ops twice, so the wider family counter is kept and the aggregate
    # left out.
    chosen = tensor_op_metrics(
        {
            "sm__ops_path_tensor_src_fp8",
            "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32",
            "sm__ops_path_tensor_src_fp16",
        }
    )
    assert chosen == [
        "sm__ops_path_tensor_src_fp16.sum",
        "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum",
    ]


def test_a_metric_one_of_several_gpus_lacks_is_not_offered():
    # `--query-metrics --csv --chips ga100,gh100` layout: a 0/1 column per chip after the
    # description.
    with gzip.open(DATA / "query_metrics_csv_ga100.csv.gz", "rt") as f:
        ga100 = f.read().splitlines()
    header = ga100[0] + ',"gh100"'
    gh100 = catalogue("gh100")
    rows = [
        line + (',"1"' if next(iter(line.split('","')), "").strip('"') in gh100 else ',"0"')
        for line in ga100[1:]
    ]
    both = parse_catalogue("\n".join([header, *rows]))
    assert both == catalogue("ga100") & gh100
    assert "sm__ops_path_tensor_src_fp16_dst_fp32" not in both  # A100 has it, H100 does not


def test_an_fp16_fp32_destination_pair_is_collected_instead_of_its_total():
    """The pair holds the same ops as the total and says which accumulated in FP16 (twice the rate
    on GeForce); a source type without both destinations keeps its total."""
    catalogue = {
        f"sm__ops_path_tensor_src_{s}"
        for s in (
            "fp16",
            "fp16_dst_fp16",
            "fp16_dst_fp32",
            "bf16",
            "bf16_dst_fp32",
            "tf32_dst_fp32",
        )
    }
    chosen = {
        m.removeprefix("sm__ops_path_tensor_src_").removesuffix(".sum")
        for m in tensor_op_metrics(catalogue)
    }
    assert chosen == {"fp16_dst_fp16", "fp16_dst_fp32", "bf16", "tf32_dst_fp32"}


CC_OF_CHIP = {
    "gv100": "7.0",
    "tu104": "7.5",
    "ga100": "8.0",
    "ga102": "8.6",
    "ad102": "8.9",
    "gh100": "9.0",
}


@pytest.mark.parametrize("chip", sorted(CC_OF_CHIP))
def test_the_tensor_counters_named_in_advice_are_the_chips_own(chip):
    """A report without tensor FLOPs names the counters to collect: on a GH100 those must be GH100's
    (GA100's `src_fp16_dst_fp32` there made ncu refuse the whole profile)."""
    names = catalogue(chip)
    advised = tensor_counters_for([CC_OF_CHIP[chip]])
    assert advised == tensor_op_metrics(names)
    assert all(m.removesuffix(".sum") in names for m in advised)


def test_the_advice_for_a_report_names_its_own_chips_counters():
    from ..conftest import fixture_path

    h100 = read_report(fixture_path("h100pcie_robocache_cmdline_details.csv"))
    fix = next(m for m in h100.missing if m.column == "flop_tensor").fix()
    ops = [
        m.removesuffix(".sum")
        for m in fix.removeprefix("ncu --metrics ").split(",")
        if "ops_path" in m
    ]
    assert ops and all(m in catalogue("gh100") for m in ops)
    # a chip ncu 2024.1 does not know
    b200 = read_report(fixture_path("b200_torch_sdpa_auto_raw.csv"))
    missing = next(m for m in b200.missing if m.column == "flop_tensor")
    assert (
        "sm__ops_path_tensor_src_<type>.sum" in missing.fix()
        and "--query-metrics" in missing.problem()
    )


@pytest.mark.parametrize(
    ("fixture", "chip"),
    [
        ("t4_nsightful_copy_blocked_details.csv", "tu104"),
        ("h100pcie_robocache_cmdline_details.csv", "gh100"),
    ],
)
def test_every_hint_to_collect_names_only_counters_the_chip_has(fixture, chip):
    """The app's header line, the kernel screen's `To collect` and `report --sort`'s fix each name
    the counters a report lacks: only ones its chip has (the first two named GA100's tensor
    counters, `src_fp16_dst_fp32`, which ncu on a T4 or an H100 refuses, and with it the whole
    profile)."""
    from flopscope.tui.presentation.kernel_sections import sections
    from flopscope.tui.presentation.text_report import missing_hint

    from ..conftest import fixture_path
    from ..helpers.commands import run

    path = fixture_path(fixture)
    report = read_report(path)
    row = report.group("name").iloc[0]
    cli = run("report", path, "--sort", "flop")
    assert cli.returncode == 2
    names = catalogue(chip)
    for told in (
        missing_hint(report),
        dict(dict(sections(row))["Provenance"])["To collect"],
        cli.stderr,
    ):
        # `ncu --metrics ...` (header, --sort's fix) or `flopscope profile --metrics ...` (kernel
        # screen)
        metrics = told.split(" --metrics ", 1)[1].split()[0].strip("`").split(",")
        # tensor FLOPs are among what is missing
        assert any("ops_path_tensor" in m for m in metrics)
        assert [m for m in metrics if m.removesuffix(".sum") not in names] == []
