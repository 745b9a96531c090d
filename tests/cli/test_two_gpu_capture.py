"""A real capture whose launches ran on two GPUs, through every command: each GPU's launches and
time reach every output, and no command crashes (it did: a read-only array in `launches_of`, issue
38)."""

from __future__ import annotations

import csv
import json

import pytest
from flopscope.core import read_report

from ..helpers.cli import run_cli
from ..helpers.two_gpu_capture import OTHER, time_per_gpu, two_gpu_page


@pytest.fixture
def page(tmp_path):
    return two_gpu_page(tmp_path)


@pytest.mark.parametrize("by", ["name", "nvtx", "launch"])
def test_report_json_keeps_each_gpus_launches_and_time(page, by):
    done = run_cli("report", page, "--by", by, "--json", "--all")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    got: dict[str, list] = {}
    for row in rows:
        n, t = got.setdefault(row["gpu"], [0, 0.0])
        got[row["gpu"]] = [n + row["count"], t + row["duration_s"]]
    expected = time_per_gpu(page)
    assert set(got) == set(expected) and OTHER in got
    for gpu, (n, t) in expected.items():
        assert got[gpu][0] == n and got[gpu][1] == pytest.approx(t, rel=1e-9)


def test_report_table_and_check_print_without_a_traceback(page):
    for args in (("report", page, "--top", "1"), ("check", page, "--baseline", page)):
        done = run_cli(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_export_by_launch_writes_every_launch_with_its_gpu(page, tmp_path, suffix):
    out = tmp_path / f"out{suffix}"
    done = run_cli("export", page, "--by", "launch", "-o", out)
    assert done.returncode == 0, done.stderr
    if suffix == ".csv":
        gpus = [row["gpu"] for row in csv.DictReader(out.open(newline=""))]
    elif suffix == ".json":
        gpus = [row["gpu"] for row in json.loads(out.read_text())["rows"]]
    else:
        import pyarrow.parquet as pq

        gpus = pq.read_table(out).column("gpu").to_pylist()
    expected = time_per_gpu(page)
    assert {g: gpus.count(g) for g in set(gpus)} == {g: n for g, (n, _) in expected.items()}


def test_every_group_opens_to_its_own_gpus_launches(page):
    """`enter` on a group (the app) and the CLI's launch lists go through `launches_of`."""
    report = read_report(page)
    for by in ("name", "nvtx"):
        groups = report.group(by)
        for _, row in groups.iterrows():
            launches = report.launches_of(row, by)
            assert len(launches) == row["count"] and set(launches["gpu"]) == {row["gpu"]}
        assert groups["count"].sum() == len(report.kernels)
