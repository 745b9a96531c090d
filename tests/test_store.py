"""The run store: real SQLite, atomic writes (a killed writer loses nothing stored), runs, diff."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from flopscope.core import read_report
from flopscope.core.diff import diff_runs
from flopscope.core.store import Store

from .conftest import fixture_path


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def test_round_trip_keeps_every_number(store):
    report = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"))
    store.save(report, "mw", params={"batch_size": "8"}, host="gpubox")
    back = store.load("mw")
    for col in ("duration_s", "flop", "dram_bytes", "peak_flop_per_s", "pct_of_peak", "ai_dram"):
        assert back.kernels[col].tolist() == pytest.approx(report.kernels[col].tolist(), nan_ok=True)
    assert back.kernels["kernel"].astype(str).tolist() == report.kernels["kernel"].astype(str).tolist()
    assert back.summary().total_flop == pytest.approx(report.summary().total_flop)
    assert back.gpu.key == report.gpu.key
    assert [m.fix() for m in back.missing] == [m.fix() for m in report.missing]
    listed = store.runs()
    assert listed.loc[0, "params"] == {"batch_size": "8"} and listed.loc[0, "launches"] == 5
    assert store.load(str(listed.loc[0, "id"])).meta["source"] == report.meta["source"]


def test_names_are_unique_and_unknown_runs_are_one_line_errors(store):
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    store.save(report, "run")
    assert store.unique_name("run") == "run-1"
    with pytest.raises(Exception, match="no such run"):
        store.load("nope")


WRITER = """
import sys
from flopscope.core import read_report
from flopscope.core.store import Store
report = read_report(sys.argv[1])
store = Store()
for i in range(10_000):
    store.save(report, f"r{i}")
    print(i, flush=True)
"""


def test_killing_a_writer_leaves_a_consistent_store(tmp_path):
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    report = fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(report)], stdout=subprocess.PIPE, text=True, env=env)
    for line in proc.stdout:
        if int(line.split()[0]) >= 5:
            break
    time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    db = sqlite3.connect(tmp_path / "flopscope.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    os.environ["FLOPSCOPE_HOME"] = str(tmp_path)
    try:
        store = Store()
        runs = store.runs()
        assert len(runs) >= 6
        for name in runs["name"]:
            assert len(store.load(name).kernels) == 154
    finally:
        del os.environ["FLOPSCOPE_HOME"]


def test_diff_lines_up_kernel_groups(store):
    a = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    b = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"))
    rows = diff_runs(a, a)
    assert (rows["duration_s_delta"] == 0).all() and (rows["presence"] == "both").all()
    rows = diff_runs(a, b)
    assert set(rows["presence"]) == {"only in A", "only in B"}
    only_b = rows[rows["presence"] == "only in B"]
    assert only_b["duration_s_delta"].sum() == pytest.approx(b.kernels["duration_s"].sum())


def test_runs_and_diff_commands(tmp_path):
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path), "COLUMNS": "200"}
    os.environ["FLOPSCOPE_HOME"] = str(tmp_path)
    try:
        store = Store()
        store.save(read_report(fixture_path("t4_mlp_matadd_full.ncu-rep")), "a")
        store.save(read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")), "b")
    finally:
        del os.environ["FLOPSCOPE_HOME"]

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "flopscope.tui.cli", *args], capture_output=True, text=True,
                              env=env)

    listed = json.loads(cli("runs", "--json").stdout)
    assert [r["name"] for r in listed] == ["a", "b"]
    out = cli("diff", "a", "b")
    assert out.returncode == 0 and "matrix_addition2D" in out.stdout and "only in A" in out.stdout
    missing = cli("diff", "a", "zzz")
    assert missing.returncode == 2 and "no such run" in missing.stderr
