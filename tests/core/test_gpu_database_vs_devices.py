"""The GPU database against the GPUs themselves: every real report we hold names its device and
carries what the driver told ncu about it (`device__attribute_*`). The database row its name finds
must hold the same SM count, compute capability and L2 size. Read here by NVIDIA's ncu_report
(reports) or the csv module (raw pages), never by flopscope's readers. Found by the H200 capture:
the database gave it the H100's 50 MiB of L2, the device reported 60 MiB."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from flopscope.core.common.gpus import find_gpu

from ..conftest import FIXTURES
from ..helpers.real_files import GPU_DATA, first_launch, plain_copy

ATTRIBUTES = (
    "display_name",
    "multiprocessor_count",
    "l2_cache_size",
    "compute_capability_major",
    "compute_capability_minor",
)


def _sources() -> list:
    shared = (
        sorted(FIXTURES.glob("*.ncu-rep")) + sorted(FIXTURES.glob("*_raw.csv"))
        if FIXTURES.is_dir()
        else []
    )
    # one report per captured GPU
    captured = sorted(GPU_DATA.glob("*/gemm_bf16_4096x4096x4096.ncu-rep.xz"))
    return [pytest.param(p, id=p.name) for p in shared] + [
        pytest.param(p, id=p.parent.name) for p in captured
    ]


def _from_report(path: Path, tmp_path: Path) -> dict[str, str | int]:
    ncu_report = pytest.importorskip("ncu_report")
    launch = (
        ncu_report.load_report(str(plain_copy(path, tmp_path))).range_by_idx(0).action_by_idx(0)
    )
    found = {}
    for name in ATTRIBUTES:
        metric = launch.metric_by_name(f"device__attribute_{name}")
        if metric is not None:
            found[name] = metric.as_string() if name == "display_name" else metric.as_uint64()
    return found


def _from_raw_page(path: Path) -> dict[str, str | int]:
    cells = first_launch(path)
    found = {}
    for name in ATTRIBUTES:
        if (cell := cells.get(f"device__attribute_{name}")) is not None:
            found[name] = cell if name == "display_name" else int(cell.replace(",", ""))
    return found


@pytest.mark.parametrize("path", _sources())
def test_the_database_row_of_each_real_device_holds_what_the_device_reported(path, tmp_path):
    device = _from_raw_page(path) if ".csv" in path.suffixes else _from_report(path, tmp_path)
    if set(ATTRIBUTES) - set(device):
        pytest.skip(f"{path.name} does not carry the device's attributes")
    gpu = find_gpu(device["display_name"], device["multiprocessor_count"])
    assert gpu is not None, device["display_name"]
    assert gpu.sms == device["multiprocessor_count"]
    assert (
        gpu.compute_capability
        == f"{device['compute_capability_major']}.{device['compute_capability_minor']}"
    )
    assert not math.isnan(gpu.l2_bytes), (
        f"{gpu.key}: the device reported {device['l2_cache_size']} bytes of L2"
    )
    assert gpu.l2_bytes == device["l2_cache_size"]


def test_every_captured_gpu_is_among_the_devices_checked():
    """Without a report per capture folder the test above would quietly check fewer GPUs."""
    folders = {p.parent for p in GPU_DATA.glob("*/environment.txt")}
    assert folders and folders == {
        p.parent for p in GPU_DATA.glob("*/gemm_bf16_4096x4096x4096.ncu-rep.xz")
    }
