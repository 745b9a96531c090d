"""`flopscope check`: the CI regression gate, on the runs of the H100 sweep (tests/data/gpu) and its
reports.

Expected changes are computed here from each run's per-launch kernels table (time per launch and
FLOP/s of a kernel from its launches' summed time and FLOPs), not by the code under test."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from flopscope.core.store.run_store import Store
from flopscope.tui.cli.args import _fraction as parse_fraction

from ..helpers.cli import run_cli

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
BASE, RUN = "linear_h100-batch_size=8", "linear_h100-batch_size=32"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    shutil.copytree(H100 / "flopscope_sweep" / "home", tmp_path / "home")
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _changes(home: Path) -> tuple[float, float]:
    """The one kernel of both runs: its time per launch change and its FLOP/s drop, from the
    launches."""
    with Store(home / "flopscope.db") as store:
        base, run = (store.load(name).kernels for name in (BASE, RUN))
    assert base["kernel_full"].nunique() == 1 and set(base["kernel_full"]) == set(
        run["kernel_full"]
    )
    time = run["duration_s"].mean() / base["duration_s"].mean() - 1
    rate = (run["flop"].sum() / run["duration_s"].sum()) / (
        base["flop"].sum() / base["duration_s"].sum()
    ) - 1
    return time, rate


def test_a_threshold_either_side_of_the_measured_change_fails_and_passes(home):
    time, rate = _changes(home)
    assert time > 0.01 and rate < -0.01  # the larger batch ran this GEMM slower per launch
    worst = max(time, -rate)
    below = f"{100 * worst * 0.9:.3f}%"
    failed = run_cli("check", RUN, "--baseline", BASE, "--max-drop", below, "--json")
    assert failed.returncode == 1, failed.stderr
    verdict = json.loads(failed.stdout)
    assert verdict["passed"] is False and verdict["regressed"] == 1 and verdict["judged"] == 1
    row = verdict["rows"][0]
    assert row["verdict"] == "regressed"
    assert row["time_per_launch_s_change"] == pytest.approx(time, rel=1e-9)
    assert row["flop_per_s_change"] == pytest.approx(rate, rel=1e-9)
    assert row["worst_change"] >= worst * (1 - 1e-9) or row["worst"] == "pct_of_roof"
    above = f"{100 * max(worst, -row['pct_of_roof_change']) * 1.1:.3f}%"
    passed = run_cli("check", RUN, "--baseline", BASE, "--max-drop", above)
    assert passed.returncode == 0, passed.stderr
    assert "passed: 0 of 1 judged group(s) regressed" in passed.stderr
    table = run_cli("check", RUN, "--baseline", BASE, "--max-drop", below)
    assert (
        table.returncode == 1 and "REGRESSED" in table.stdout and "FAILED: 1 of 1" in table.stderr
    )


def test_groups_in_one_run_only_are_listed_and_a_gate_that_judged_nothing_fails(home):
    done = run_cli("check", "linear_h100-batch_size=1", "--baseline", BASE, "--json")
    assert done.returncode == 1
    rows = json.loads(done.stdout)["rows"]
    assert sorted(r["verdict"] for r in rows) == ["new", "vanished"]
    said = run_cli("check", "linear_h100-batch_size=1", "--baseline", BASE)
    assert said.returncode == 1 and "no kernel group" in said.stderr and "--by nvtx" in said.stderr


def test_report_files_by_nvtx_range(tmp_path):
    """The bf16 transformer step at batch 32 against batch 8, as files: most ranges match and the 4x
    batch regresses time per launch; the same file against itself passes."""
    bs8, bs32 = (H100 / f"train_transformer_bf16_bs{n}.ncu-rep.xz" for n in (8, 32))
    done = run_cli("check", bs32, "--baseline", bs8, "--by", "nvtx", "--json")
    assert done.returncode == 1, done.stderr
    rows = json.loads(done.stdout)["rows"]
    both = [r for r in rows if r["presence"] == "both"]
    assert len(both) >= 0.8 * len(rows)
    slower = [
        r for r in both if r["time_per_launch_s_change"] and r["time_per_launch_s_change"] > 0.05
    ]
    assert {r["kernel"] for r in rows if r["verdict"] == "regressed"} >= {
        r["kernel"] for r in slower if r["gated"]
    }
    same = run_cli("check", bs8, "--baseline", bs8, "--by", "nvtx")
    assert same.returncode == 0, same.stderr


@pytest.mark.parametrize(
    "args", [["--baseline", "no-such-run"], ["--baseline", BASE, "--max-drop", "150%"]]
)
def test_bad_input_is_one_line_exit_2(home, args):
    done = run_cli("check", RUN, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2  # argparse: usage line + message


def test_thresholds_read_as_a_share():
    assert [parse_fraction(t) for t in ("5%", "5", "0.05", "12.5%")] == [0.05, 0.05, 0.05, 0.125]
    for bad in ("0", "100%", "-3%", "nan", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_fraction(bad)
