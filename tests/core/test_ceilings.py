"""`flopscope ceilings`: measured ceilings stored per host + GPU + driver and shown beside the
datasheet.

No GPU runs these tests. Most stored results below are SYNTHETIC, written by the test (not measured
anywhere), with rates at the fractions of the H100 datasheet that published microbenchmarks report
(DRAM ~86%, FP32 ~89%, issue 22); one test lists what the bench (core/profiling/ceilings_bench.py)
measured on a real H100, recorded in tests/data/gpu/ (checked against the hardware's limits in
test_ceilings_h100.py). What is tested is storage, reload, the comparison with the datasheet and the
refusal where torch sees no GPU."""

from __future__ import annotations

import json

import pytest
from flopscope.core.common.errors import FlopscopeError
from flopscope.core.store.ceilings import from_bench, load_all, save
from flopscope.core.store.run_store import Store

from ..helpers.ceilings import SYNTHETIC, datasheet, recorded_doc, synthetic
from ..helpers.cli import run_cli as flopscope


def datasheet_h100() -> dict:
    return datasheet("h100-sxm")


def test_ceilings_are_stored_per_host_gpu_and_driver_and_reload(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    with Store() as store:
        save(store, synthetic())
        save(store, synthetic(measured=1.8e9))  # the same host, GPU and driver: replaces
        # another driver: kept beside it
        save(store, synthetic(driver="570.133.20", measured=1.6e9))
    out = flopscope("ceilings", "--list", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(d["driver"], d["measured"]) for d in doc] == [
        ("580.159.04", 1.8e9),
        ("570.133.20", 1.6e9),
    ]
    sheet = datasheet_h100()
    assert doc[0]["values"] == {
        "dram_bytes_per_s": 0.86 * sheet["dram"],
        "fp32_flop_per_s": 0.89 * sheet["fp32"],
    }
    assert doc[0]["of_datasheet"] == pytest.approx(
        {"dram_bytes_per_s": 0.86, "fp32_flop_per_s": 0.89}
    )
    assert doc[0]["origin"] == SYNTHETIC and doc[0]["how"] == {"torch": "2.11.0+cu130"}
    assert (
        json.loads(
            flopscope("ceilings", "--list", "--json", "--host", "elsewhere", home=tmp_path).stdout
        )
        == []
    )


def test_the_list_names_its_roof_and_each_ceiling_beside_the_datasheet(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    with Store() as store:
        save(store, synthetic())
        assert [c.driver for c in load_all(store, "gpubox")] == ["580.159.04"]
    out = flopscope("ceilings", "--list", home=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"{SYNTHETIC} on gpubox: NVIDIA H100 80GB HBM3, driver 580.159.04")
    dram = next(ln for ln in lines if "DRAM" in ln)
    fp32 = next(ln for ln in lines if "FP32" in ln)
    assert "2.88 TB/s" in dram and "86% of datasheet" in dram
    assert "59.5 TFLOP/s" in fp32 and "89% of datasheet" in fp32


def test_the_list_of_a_real_h100_measurement_says_the_clock_of_each_ceiling(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    doc = recorded_doc(2)
    with Store() as store:
        save(store, from_bench("localhost", doc))
    out = flopscope("ceilings", "--list", home=tmp_path)
    assert out.returncode == 0, out.stderr
    bf16 = next(ln for ln in out.stdout.splitlines() if "BF16 GEMM" in ln)
    mhz = json.loads(doc["how"]["sm_clock_mhz"])["tensor_bf16_flop_per_s"]
    # H100 SXM: SMs x dense BF16 FLOP per clock per SM (Hopper whitepaper)
    bf16_per_clock = 132 * 4096
    at_clock = doc["values"]["tensor_bf16_flop_per_s"] / (bf16_per_clock * mhz * 1e6)
    assert f"SM {mhz / 1e3:.2f} GHz, {at_clock:.0%} at it" in bf16
    assert f"{doc['values']['tensor_bf16_flop_per_s'] / 989.4e12:.0%} of datasheet" in bf16


def test_measuring_where_torch_sees_no_gpu_is_one_line(tmp_path):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: this checks the refusal without one")
    out = flopscope("ceilings", home=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert (
        out.stderr.count("\n") == 1
        and "sees no CUDA GPU" in out.stderr
        and "flopscope doctor" in out.stderr
    )
    assert "None" not in out.stderr  # torch.version.cuda is None in a CPU-only build: said in words
    built = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
    assert built in out.stderr
    # nothing stored
    assert json.loads(flopscope("ceilings", "--list", "--json", home=tmp_path).stdout) == []


@pytest.mark.parametrize(
    "doc",
    [{}, {"gpu": "x"}, {"gpu": "x", "driver": "1", "values": {"fp32_flop_per_s": "fast"}}, []],
)
def test_a_result_that_is_not_a_measurement_is_refused(doc):
    with pytest.raises(FlopscopeError, match="no usable result"):
        from_bench("gpubox", doc)
