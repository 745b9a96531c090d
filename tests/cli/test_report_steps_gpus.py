"""Steps per GPU: on a file whose launches ran on two GPUs, `report --by module`'s steps are each
GPU's own (its launches' kernel time, FLOPs, idle share and MFU against its own peaks, beside the
one wall time of the timing run), checked against each GPU's figures read from the page with `csv`
(tests/helpers/two_gpu_steps.py); the printed table names the GPU on each line."""

from __future__ import annotations

import json
import statistics

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.steps import write_timing
from ..helpers.two_gpu_steps import gpu_steps, two_gpu_step_page

WALLS = {1: 0.0412, 2: 0.00311, 3: 0.00297}


@pytest.fixture
def page(tmp_path):
    path = two_gpu_step_page(tmp_path)
    write_timing(tmp_path, WALLS)
    return path


def test_each_gpus_steps_are_its_own_launches(page):
    out = flopscope("report", page, "--by", "module", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["steps"]
    expected = gpu_steps(page)
    assert len(expected) == 2
    rows = doc["steps"]
    assert len(rows) == 2 * len(WALLS)  # a row per GPU and step, not one per step
    for name, steps in expected.items():
        mine = [r for r in rows if r["gpu"].endswith(name)]
        peaks = doc["peaks_by_gpu"][mine[0]["gpu"]]
        assert [r["step"] for r in mine] == [1, 2, 3]
        for r in mine:
            seconds, fp32, tf32 = steps[r["step"]]
            wall = WALLS[r["step"]]
            assert r["wall_s"] == wall
            assert r["kernel_s"] == pytest.approx(seconds, rel=1e-9)
            assert r["idle_share"] == pytest.approx((wall - seconds) / wall, rel=1e-9)
            assert r["flop_by_precision"]["fp32"] == pytest.approx(fp32, rel=1e-9)
            at_peak = fp32 / peaks["fp32"]["flop_per_s"] + tf32 / peaks["tensor_tf32"]["flop_per_s"]
            assert r["mfu_kernel"] == pytest.approx(at_peak / seconds, rel=1e-9)
            assert r["mfu_wall"] == pytest.approx(at_peak / wall, rel=1e-9)
        median = next(m for m in doc["medians"] if m["gpu"] == mine[0]["gpu"])
        kernel = statistics.median([steps[2][0], steps[3][0]])  # step 1, the warm-up, left out
        assert median["kernel_s"] == pytest.approx(kernel, rel=1e-9)
        assert median["wall_s"] == pytest.approx(statistics.median([WALLS[2], WALLS[3]]))
    # the two H100s' datasheet TF32 peaks differ: each GPU is held to its own
    tf32 = {g: p["tensor_tf32"]["flop_per_s"] for g, p in doc["peaks_by_gpu"].items()}
    assert len(set(tf32.values())) == 2
    assert doc["median"] is None


def test_each_gpu_node_of_the_tree_is_judged_by_its_own_peaks(page):
    doc = json.loads(flopscope("report", page, "--by", "module", "--json").stdout)
    root = doc["rows"][0]
    peaks = doc["steps"]["peaks_by_gpu"]
    total_at_peak = total_s = 0.0
    for name, steps in gpu_steps(page).items():
        node = next(n for n in root["children"] if n["name"].endswith(name))
        seconds = sum(f[0] for f in steps.values())
        fp32 = sum(f[1] for f in steps.values())
        tf32 = sum(f[2] for f in steps.values())
        own = peaks[node["name"]]
        at_peak = fp32 / own["fp32"]["flop_per_s"] + tf32 / own["tensor_tf32"]["flop_per_s"]
        assert node["mfu_kernel"] == pytest.approx(at_peak / seconds, rel=1e-9)
        total_at_peak, total_s = total_at_peak + at_peak, total_s + seconds
    assert root["mfu_kernel"] == pytest.approx(total_at_peak / total_s, rel=1e-9)


def test_the_printed_steps_name_each_gpu(page):
    out = flopscope("report", page, "--by", "module", "--depth", "1", columns=200)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["GPU", "Step"])
    body = lines[head + 1 : head + 9]
    assert all(line.startswith("GPU 0: NVIDIA H100 ") for line in body)
    assert sum("median" in line for line in body) == 2
    assert sum("PCIe" in line for line in body) == 4  # its 3 steps and its median
