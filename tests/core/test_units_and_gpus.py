"""Unit conversion, number cells, kernel names and the GPU database."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from flopscope.core.common.gpus import all_gpus, find_gpu, gpu_in_text
from flopscope.core.common.units import is_missing, parse_number, unit_factor
from flopscope.core.table.names import short_name


@pytest.mark.parametrize(
    ("unit", "factor"),
    [
        ("byte", 1),
        ("Kbyte", 1e3),
        ("Mbyte", 1e6),
        ("Gbyte", 1e9),
        ("Tbyte", 1e12),
        ("ns", 1e-9),
        ("nsecond", 1e-9),
        ("us", 1e-6),
        ("usecond", 1e-6),
        ("msecond", 1e-3),
        ("second", 1),
        ("hz", 1),
        ("Khz", 1e3),
        ("Mhz", 1e6),
        ("Ghz", 1e9),
        ("cycle/second", 1),
        ("cycle/nsecond", 1e9),
        ("byte/s", 1),
        ("Gbyte/s", 1e9),
        ("Gbyte/second", 1e9),
        ("byte/cycle", 1),
        ("inst/cycle", 1),
        ("%", 1),
        ("", 1),
        ("register/thread", 1),
    ],
)
def test_unit_factor(unit, factor):
    assert unit_factor(unit) == pytest.approx(factor)


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("1,234.5", 1234.5),
        ("5,323,503,232.00", 5323503232.0),
        ("12", 12.0),
        ("0.00", 0.0),
        ("-3", -3.0),
    ],
)
def test_parse_number(cell, value):
    assert parse_number(cell) == value


@pytest.mark.parametrize("cell", ["n/a", "", "  ", "abc", None])
def test_parse_number_missing(cell):
    assert math.isnan(parse_number(cell))


def test_is_missing_knows_every_empty_cell_a_kernels_table_holds():
    """Cells as views read them: a nullable integer column's NA (device, stream), a float column's
    NaN (numpy or Python), a categorical's or object column's missing value; and values that only
    look empty."""
    table = pd.DataFrame(
        {
            "device": pd.array([0, None], dtype="Int64"),
            "flop": [1.0, np.nan],
            "kernel": pd.Categorical(["gemm", None]),
            "nvtx": pd.Series(["step", None], dtype=object),
        }
    )
    assert [is_missing(table[c].iloc[1]) for c in table] == [True] * 4
    assert [is_missing(table[c].iloc[0]) for c in table] == [False] * 4
    assert all(is_missing(v) for v in (None, math.nan, float("nan"), np.float64("nan"), pd.NA))
    assert not any(
        is_missing(v) for v in (0, 0.0, "", "n/a", math.inf, -math.inf, np.int64(0), False)
    )


@pytest.mark.parametrize(
    ("full", "short"),
    [
        ("void gemm_v0<float>(float *, float *, float *, int)", "gemm_v0<float>"),
        ("ampere_sgemm_128x32_tn", "ampere_sgemm_128x32_tn"),
        (
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,"
                " std::array<char *, 1>>(int, T2, T3)"
            ),
            (
                "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<…>,"
                " std::array<…>>"
            ),
        ),
        ("void f<T>(T) [with T = float]", "f<T>(T) [with T = float]"),
    ],
)
def test_short_name(full, short):
    assert short_name(full) == short


def test_database_covers_required_gpus_with_sources():
    required = [
        "Tesla K40m",
        "Tesla K80",
        "Tesla P100-SXM2-16GB",
        "Tesla V100-SXM2-32GB",
        "Tesla V100-PCIE-16GB",
        "Tesla T4",
        "NVIDIA A100-SXM4-40GB",
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA A100-PCIE-40GB",
        "NVIDIA A100 80GB PCIe",
        "NVIDIA A10",
        "NVIDIA L4",
        "NVIDIA L40S",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA H100 PCIe",
        "NVIDIA H200",
        "NVIDIA B200",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 4090",
    ]
    for name in required:
        gpu = find_gpu(name)
        assert gpu is not None, name
        assert gpu.source.startswith("https://")
        assert gpu.peak("fp32") > 1e12 and gpu.dram_bytes_per_s > 1e11


def test_peaks_are_per_precision_and_dense():
    a100 = find_gpu("NVIDIA A100-SXM4-80GB")
    # A100: 108 SMs x 64 FP32 lanes x 2 (FMA) x 1.41 GHz; TF32 8x and BF16 16x of that (dense)
    assert a100.peak("fp32") == pytest.approx(108 * 64 * 2 * 1.41e9, rel=0.01)
    assert a100.peak("tensor_tf32") == pytest.approx(8 * a100.peak("fp32"), rel=0.01)
    assert a100.peak("tensor_bf16") == pytest.approx(16 * a100.peak("fp32"), rel=0.01)


def test_k80_is_one_gpu_of_the_board():
    k80 = find_gpu("Tesla K80")
    assert k80.peak("fp32") == pytest.approx(8.73e12 / 2, rel=0.01)
    assert "per GPU" in k80.notes


def test_lookup_by_key_name_and_free_text():
    assert find_gpu("h100-sxm").key == "h100-sxm"
    assert find_gpu("Tesla T4").key == "t4"
    assert find_gpu("nonexistent") is None
    assert gpu_in_text("Detected GPU: Tesla V100-PCIE-32GB (SM 7.0)").key == "v100-pcie-32gb"
    assert len({g.key for g in all_gpus()}) == len(all_gpus())


@pytest.mark.parametrize(
    "key",
    [
        "h100-sxm",
        "h100-pcie",
        "h100-nvl",
        "h800-sxm",
        "h800-pcie",
        "h200-sxm",
        "h200-nvl",
        "gh200-96gb",
        "gh200-144gb",
    ],
)
def test_hopper_tensor_peaks_are_quoted_at_the_tensor_clock(key):
    """Dense FP16 tensor peak = SMs x 4096 FLOP/clk (4 tensor cores x 1024) x the tensor clock; TF32
    half, FP8 twice that. FP64 tensor peaks (where not export-capped) are 2 x FP64 SIMT at the boost
    clock."""
    gpu = next(g for g in all_gpus() if g.key == key)
    assert gpu.peak("tensor_fp16") == pytest.approx(
        gpu.sms * 4096 * gpu.clock_hz("tensor_fp16"), rel=1e-3
    )
    assert gpu.peak("tensor_tf32") == pytest.approx(
        gpu.sms * 2048 * gpu.clock_hz("tensor_tf32"), rel=1e-3
    )
    assert gpu.peak("tensor_fp8") == pytest.approx(
        gpu.sms * 8192 * gpu.clock_hz("tensor_fp8"), rel=1e-3
    )
    assert gpu.tensor_clock_hz < gpu.boost_clock_hz or math.isnan(gpu.boost_clock_hz)
    assert gpu.clock_hz("tensor_fp64") is gpu.boost_clock_hz
    if gpu.peak("fp64") > 5e12:
        assert gpu.peak("tensor_fp64") == pytest.approx(2 * gpu.peak("fp64"), rel=2e-3)


@pytest.mark.parametrize(
    "key",
    [
        "h100-sxm",
        "h100-pcie",
        "h100-nvl",
        "h800-sxm",
        "h800-pcie",
        "h200-sxm",
        "h200-nvl",
        "gh200-96gb",
        "gh200-144gb",
    ],
)
def test_every_hopper_has_a_simt_fp16_ceiling_twice_its_fp32(key):
    """Hopper's half2 FMA does two FP16 FMAs per FP32 one: the whitepaper's H100 SXM/PCIe FP16
    non-tensor peaks are 133.8/102.4 TFLOP/s. Before, the H800 and NVL rows had none, so FP16 FLOPs
    were taken at the FP32 rate."""
    gpu = next(g for g in all_gpus() if g.key == key)
    whitepaper = {"h100-sxm": 133.8e12, "h100-pcie": 102.4e12}
    assert gpu.peak("fp16") == pytest.approx(whitepaper.get(key, 2 * gpu.peak("fp32")), rel=2e-3)
    assert gpu.peak("fp16") == pytest.approx(2 * gpu.peak("fp32"), rel=2e-3)


def test_tensor_clock_defaults_to_the_boost_clock():
    a100 = find_gpu("NVIDIA A100-SXM4-80GB")
    assert a100.tensor_clock_hz == a100.boost_clock_hz == 1410e6
    # Ampere: 2048 FLOP/clk/SM
    assert a100.peak("tensor_fp16") == pytest.approx(108 * 2048 * 1410e6, rel=1e-3)


@pytest.mark.parametrize(
    ("text", "cc", "key"),
    [
        # which A100? not the A10 inside its name
        ("Detected GPU: NVIDIA A100 (SM 8.0)", None, None),
        ("Running on NVIDIA A10G with 24 GB", None, None),  # the AWS part is not an A10
        ("Device 0: NVIDIA GeForce RTX 5070 Ti", None, None),
        ("Device 0: NVIDIA GeForce RTX 4090 D", None, None),
        ("Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9", "8.9", "rtx4090"),
        ("GPU: NVIDIA A10\n", "8.6", "a10"),
        ("GPU: NVIDIA H200 NVL", None, "h200-nvl"),  # the longest name wins over NVIDIA H200
        ("Device 0: NVIDIA GeForce RTX 5060 Ti", "12.0", "rtx5060ti"),
        # the file's launches ran on CC 8.0: not a 4090
        ("Device 0: NVIDIA GeForce RTX 4090", "8.0", None),
    ],
)
def test_a_gpu_in_program_output_is_a_whole_name_of_the_files_cc(text, cc, key):
    gpu = gpu_in_text(text, cc)
    assert (gpu.key if gpu else None) == key


def test_gpu_flag_refuses_another_architecture_and_suggests_close_names():
    from flopscope.core import FlopscopeError
    from flopscope.core.common.gpus import require_gpu

    with pytest.raises(FlopscopeError) as wrong_cc:
        require_gpu("T4", {"7.0"})
    assert (
        "Tesla T4 is compute capability 7.5, but the report's launches ran on CC 7.0"
        in wrong_cc.value.line()
    )
    assert "v100-pcie-32gb" in wrong_cc.value.line()
    # no CC known: accepted
    assert require_gpu("T4", {"7.5"}).key == "t4" and require_gpu("T4").key == "t4"
    with pytest.raises(FlopscopeError) as unknown:
        require_gpu("V100")
    line = unknown.value.line()
    assert all(
        k in line for k in ("v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb", "v100-pcie-32gb")
    )
    assert "flopscope gpus" in line


@pytest.mark.parametrize(
    ("cells", "dtype", "expected"),
    [
        (["1", "2", None, "7"], "Int64", [1, 2, None, 7]),  # Arrow's one cast
        (["-3", "40000000000"], "Int64", [-3, 40000000000]),
        (["1", "n/a"], "Int64", [1, None]),  # ncu's n/a: the general path
        (["1.0", "2"], "Int64", [1, 2]),
        ([" 5"], "Int64", [5]),
        # beyond float64's exact integers: kept as text
        (["9007199254740993"], "object", ["9007199254740993"]),
        (["(mixed)", "1"], "object", ["(mixed)", "1"]),
    ],
)
def test_ids_read_as_text_become_whole_numbers_where_every_one_is(cells, dtype, expected):
    from flopscope.core.common.units import whole_numbers

    for col in (pd.Series(cells, dtype=object), pd.Series(cells, dtype="str")):
        got = whole_numbers(col)
        assert (
            str(got.dtype) == dtype
            if dtype == "Int64"
            else not isinstance(got.dtype, pd.Int64Dtype)
        )
        assert [None if pd.isna(v) else v for v in got.tolist()] == expected
