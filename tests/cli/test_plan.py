"""The collection planner (`profile --plan`) and the cost line after a run, on the project's H100
capture (tests/data/gpu/nvidia_h100_80gb_hbm3/): pass counts and launches are counted here from
ncu's own streams."""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from flopscope.core.ncu.catalogue import parse_catalogue, tensor_op_metrics
from flopscope.core.ncu.command import METRIC_SETS
from flopscope.core.profiling.plan import RECORDED

from ..helpers.cli import run_cli as flopscope
from ..helpers.h100_replay import H100, LINEAR_BS8, RUN, replay_ncu
from ..helpers.profile import make_ncu

PROFILING = re.compile(r"^==PROF== Profiling \".*\" - \d+: .* - (\d+) pass(?:es)?$", re.M)


def passes_in(path: Path) -> list[int]:
    return [int(p) for p in PROFILING.findall(path.read_text())]


def test_the_recorded_passes_are_what_the_h100_streams_show():
    """RECORDED's H100 row: the metric list of those runs is today's roofline set, and every launch
    took 7."""
    gpu, metrics, ncu, passes, _ = RECORDED[0]
    with gzip.open(H100 / "query_metrics.txt.gz", "rt") as f:
        catalogue = parse_catalogue(f.read())
    assert (H100 / "metrics_flopscope.txt").read_text().strip().split(",") == METRIC_SETS[
        metrics
    ] + tensor_op_metrics(catalogue)
    seen = [p for s in sorted(H100.glob("train_*.stream.txt")) for p in passes_in(s)]
    seen += [
        int(p)
        for p in re.findall(
            r"\((\d+) passes\)", (H100 / "flopscope_profile.stream.txt").read_text()
        )
    ]
    assert len(seen) > 400 and set(seen) == {passes}
    assert (
        gpu in (H100 / "environment.txt").read_text()
        and f"Version {ncu}" in (H100 / "environment.txt").read_text()
    )


@pytest.mark.parametrize("metrics", ["flops", "memory", "full"])
def test_each_recorded_set_is_what_its_h100_run_took(metrics):
    """The flops, memory and full rows: each from a `flopscope profile --metrics SET` run on the
    H100 (capture part e), whose run.json names the set and whose ncu log says the passes of every
    launch."""
    gpu, _, ncu, passes, _ = next(row for row in RECORDED if row[1] == metrics)
    plan = H100 / "plan"
    run = json.loads((plan / f"run_{metrics}.json").read_text())
    assert run["metrics"] == metrics and run["ncu_exit"] == 0
    seen = passes_in(plan / f"ncu_{metrics}.log")
    assert seen and set(seen) == {passes} and run["passes"] == seen
    assert (
        gpu in (H100 / "environment_e.txt").read_text()
        and f"Version {ncu}" in (H100 / "environment_e.txt").read_text()
    )


def test_plan_for_the_full_set_on_the_h100_says_its_passes(tmp_path):
    expected = set(passes_in(H100 / "plan" / "ncu_full.log"))
    assert len(expected) == 1
    out = flopscope(
        "profile", "--plan", "--metrics", "full", "--gpu", "NVIDIA H100 80GB HBM3",
        "--launch-count", "3", "--ncu", make_ncu(tmp_path), "--", "python3", "never_run.py",
        home=tmp_path / "home",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (passes,) = expected
    assert (
        f"passes    {passes} per launch (recorded on an NVIDIA H100 80GB HBM3 with ncu 2025.3.1)"
        in out.stdout
    )
    assert f"about {3 * passes} kernel runs" in out.stdout


def h100_home(tmp_path: Path) -> tuple[Path, list[str]]:
    """A store holding the `flopscope profile` run made on the H100, and the command it stored."""
    home = tmp_path / "home"
    shutil.copytree(H100 / "flopscope_home", home)
    with sqlite3.connect(home / "flopscope.db") as db:
        (command,) = db.execute("SELECT command FROM runs WHERE name = 'linear_bs8'").fetchone()
    return home, json.loads(command)


def test_plan_counts_from_the_last_run_of_the_same_command(tmp_path):
    home, command = h100_home(tmp_path)
    passes = passes_in(home / "runs" / "linear_bs8" / "ncu.log")
    before = sorted(p.name for p in (home / "runs").iterdir())
    out = flopscope("profile", "--plan", "--ncu", make_ncu(tmp_path), "--", *command, home=home)
    assert out.returncode == 0, out.stderr
    assert "nothing was run" in out.stdout.splitlines()[0]
    assert (
        f"passes    {passes[0]} per launch, as ncu needed at the last run of this command here (run"
        " linear_bs8)" in out.stdout
    )
    assert f"launches  {len(passes)} at the last run of this command here" in out.stdout
    assert f"replays   about {sum(passes)} kernel runs" in out.stdout
    # no run folder, nothing profiled
    assert sorted(p.name for p in (home / "runs").iterdir()) == before


def test_plan_without_a_past_run_takes_the_recorded_gpu(tmp_path):
    out = flopscope(
        "profile",
        "--plan",
        "--gpu",
        "NVIDIA H100 80GB HBM3",
        "--launch-count",
        "5",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "python3",
        "never_run.py",
        home=tmp_path / "home",
    )
    assert out.returncode == 0, out.stderr
    assert (
        "passes    7 per launch (recorded on an NVIDIA H100 80GB HBM3 with ncu 2025.3.1)"
        in out.stdout
    )
    assert (
        "launches  at most 5 (--launch-count)" in out.stdout
        and "about 35 kernel runs" in out.stdout
    )
    assert not (tmp_path / "home" / "flopscope.db").exists()


def test_plan_for_a_gpu_nobody_recorded_says_unknown(tmp_path):
    out = flopscope(
        "profile",
        "--plan",
        "--gpu",
        "a100-sxm4-80gb",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "true",
        home=tmp_path / "home",
    )
    assert out.returncode == 0, out.stderr
    assert (
        "passes    unknown for a100-sxm4-80gb (on an NVIDIA H100 80GB HBM3 it took 7)" in out.stdout
    )
    assert "replays" not in out.stdout


def cuts(stdout: str) -> list[str]:
    return [
        re.split(r"\s{2,}", line.strip())[1]
        for line in stdout.split("to profile less:\n")[1].splitlines()
    ]


def test_every_suggested_cut_is_accepted_as_written(tmp_path):
    """Each cut's flags, as printed, pass flopscope's own checks (and ncu's option list, where a
    real ncu is here): a suggestion that cannot be typed is worse than none."""
    ncu = make_ncu(tmp_path)
    out = flopscope("profile", "--plan", "--ncu", ncu, "--", "true", home=tmp_path / "home")
    suggested = cuts(out.stdout)
    assert len(suggested) == 5
    for flags in suggested:
        argv = shlex.split(flags.split("  (")[0])  # as a shell would split what the user pastes
        again = flopscope(
            "profile", "--plan", "--ncu", ncu, *argv, "--", "true", home=tmp_path / "home"
        )
        assert again.returncode == 0, (flags, again.stderr)
    real = os.environ.get("FLOPSCOPE_REAL_NCU")
    if real:
        help_text = subprocess.run(
            [real, "--help"], capture_output=True, text=True, timeout=60
        ).stdout
        assert "--filter-mode" in help_text and "per-launch-config" in help_text


def test_after_a_run_the_summary_says_time_and_passes(tmp_path):
    """The H100 `flopscope profile` run replayed: ncu's time and the passes its progress lines
    announced."""
    passes = passes_in(RUN / "ncu.log")
    ncu = replay_ncu(tmp_path, RUN / "ncu.log", RUN / "report.ncu-rep.xz")
    out = flopscope(
        "profile",
        "--ncu",
        ncu,
        "--no-tui",
        "--name",
        "r",
        "--",
        *LINEAR_BS8,
        home=tmp_path / "home",
    )
    assert out.returncode == 0, out.stderr
    line = re.search(
        r"^flopscope: profiled (\d+) launch\(es\) in ([\d.]+) s, (\S+) passes each, (\d+) replays"
        r" in all$",
        out.stderr,
        re.M,
    )
    assert line, out.stderr
    assert (int(line.group(1)), line.group(3), int(line.group(4))) == (
        len(passes),
        "7",
        sum(passes),
    )
    meta = json.loads((tmp_path / "home" / "runs" / "r" / "run.json").read_text())
    assert meta["passes"] == passes and 0 < meta["ncu_seconds"] == pytest.approx(
        float(line.group(2)), abs=0.06
    )


@pytest.mark.parametrize("timing", [True, False])
def test_plan_with_modules_says_the_timing_run_follows_unless_no_timing(tmp_path, timing):
    flags = ["--modules", *([] if timing else ["--no-timing"])]
    out = flopscope(
        "profile", "--plan", "--gpu", "NVIDIA H100 80GB HBM3", *flags, "--ncu", make_ncu(tmp_path),
        "--", "python3", "never_run.py",
        home=tmp_path / "home",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    said = [line for line in out.stdout.splitlines() if line.startswith("timing ")]
    assert said == (["timing    then the program once more, without ncu, each training step timed "
                     "(--no-timing skips it)"] if timing else [])  # fmt: skip
