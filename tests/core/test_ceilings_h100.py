"""Ceilings measured on a real H100 (tests/data/gpu/nvidia_h100_80gb_hbm3/ceilings/, `flopscope
ceilings --json` three times, capture part e): what the bench reached must fit the hardware it ran
on, checked against limits computed here from the SM count, the per-clock rates of the Hopper
whitepaper and the SM clock nvidia-smi reported during each measurement; and flopscope's fractions
of the datasheet follow from the same figures."""

from __future__ import annotations

import json

import pytest
from flopscope.core.store.ceilings import from_bench

from ..helpers.ceilings import RECORDED_DIR, datasheet, recorded_doc

SMS = 132  # H100 SXM5
# Dense FLOP per clock per SM (Hopper whitepaper): 128 FP32 FMA lanes, 64 FP64, tensor FP16/BF16
# 4096 (= 989.4e12 / (132 x 1.83 GHz)), TF32 half of it, FP8 twice.
PER_CLOCK = {
    "fp32_flop_per_s": 2 * 128,
    "fp64_flop_per_s": 2 * 64,
    "tensor_tf32_flop_per_s": 2048,
    "tensor_fp16_flop_per_s": 4096,
    "tensor_bf16_flop_per_s": 4096,
    "tensor_fp8_flop_per_s": 8192,
}
RUNS = (1, 2, 3)


def clocks(doc: dict) -> dict[str, float]:
    return {k: v * 1e6 for k, v in json.loads(doc["how"]["sm_clock_mhz"]).items()}


@pytest.mark.parametrize("n", RUNS)
def test_compute_ceilings_stay_under_the_hardware_limit_at_the_clock_they_ran_at(n):
    doc = recorded_doc(n)
    clock = clocks(doc)
    assert set(PER_CLOCK) <= set(doc["values"]) and set(PER_CLOCK) <= set(clock)
    for key, per_clock in PER_CLOCK.items():
        limit = SMS * per_clock * clock[key]
        # nvidia-smi samples the clock every few tens of ms: a 3% margin for a sample that missed a
        # dip
        assert 0.6 * limit < doc["values"][key] <= 1.03 * limit, key


@pytest.mark.parametrize("n", RUNS)
def test_memory_ceilings_are_ordered_and_dram_is_under_its_datasheet(n):
    values = recorded_doc(n)["values"]
    dram = datasheet("h100-sxm")["dram"]
    assert 0.8 * dram < values["dram_bytes_per_s"] < dram
    # An L2-resident copy outruns DRAM (the first bench's single copy timed its launch and read
    # 1.5-1.7 TB/s)
    assert values["l2_bytes_per_s"] > 1.2 * values["dram_bytes_per_s"]


def test_the_first_bench_shows_the_launch_bound_l2_it_was_mended_for():
    (v1,) = json.loads((RECORDED_DIR / "ceilings_v1_1.json").read_text())
    assert v1["values"]["l2_bytes_per_s"] < v1["values"]["dram_bytes_per_s"]


@pytest.mark.parametrize("n", RUNS)
def test_fractions_of_the_datasheet_at_the_measured_clock(n):
    doc = recorded_doc(n)
    c = from_bench("localhost", doc)
    clock = clocks(doc)
    sheet = datasheet("h100-sxm")
    assert c.of_datasheet("fp32_flop_per_s") == pytest.approx(
        doc["values"]["fp32_flop_per_s"] / sheet["fp32"]
    )
    for key, per_clock in PER_CLOCK.items():
        # the datasheet at the measured clock is the per-clock rate x SMs x that clock (quoted
        # clocks of 1830 and 1980 MHz are what make the whitepaper's figures, so the two agree to
        # the datasheet's rounding)
        at_clock = doc["values"][key] / (SMS * per_clock * clock[key])
        assert c.of_datasheet_at_clock(key) == pytest.approx(at_clock, rel=2e-3), key
    assert c.of_datasheet_at_clock("dram_bytes_per_s") is None  # DRAM does not follow the SM clock


def test_a_measurement_without_sampled_clocks_says_so():
    (v1,) = json.loads((RECORDED_DIR / "ceilings_v1_1.json").read_text())
    c = from_bench("localhost", v1)
    assert (
        c.clock_hz("fp32_flop_per_s") is None and c.of_datasheet_at_clock("fp32_flop_per_s") is None
    )


def test_the_clock_sampler_reads_nvidia_smi_while_a_ceiling_runs(tmp_path, monkeypatch):
    """The bench's ClockSampler with an nvidia-smi stand-in that prints one clock as the real one
    does (`--query-gpu=clocks.sm --format=csv,noheader,nounits`: `1980`): samples inside a window
    count, none outside; without nvidia-smi it stops and the clock is unknown."""
    import time

    from flopscope.core.profiling import ceilings_bench

    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 1755\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    sampler = ceilings_bench.ClockSampler(0)
    t0 = time.time()
    time.sleep(0.5)
    t1 = time.time()
    sampler.stop()
    assert sampler.median(t0, t1) == 1755.0
    assert sampler.median(t1 + 60, t1 + 120) is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    lost = ceilings_bench.ClockSampler(0)
    lost.stop()
    assert lost.samples == []
