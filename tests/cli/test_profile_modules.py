"""`flopscope profile --modules` here and over SSH: ncu gets its NVTX support, and the program, run
as given, gets the module hooks as its sitecustomize (ncu is the replaying stand-in: no GPU here;
the program is a CPU PyTorch training step with a recording stand-in for torch.cuda.nvtx)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import make_ncu, one_error_line, remote

pytest.importorskip("torch", reason="PyTorch is not installed")

PROGRAM = """
import json, sys, torch
from torch import nn

calls = []

class Recorder:
    def range_push(self, name): calls.append(name)
    def range_pop(self): pass
    def range_start(self, name): calls.append(name); return len(calls)
    def range_end(self, range_id): pass

torch.cuda.nvtx = Recorder()
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.ones(3, 4)).sum().backward()
opt.step()
json.dump(calls, open(sys.argv[1], "w"))
"""


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_the_program_runs_unchanged_with_module_ranges_and_ncu_records_nvtx(
    tmp_path, request, where
):
    script, calls = tmp_path / "train.py", tmp_path / "calls.json"
    script.write_text(PROGRAM)
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    out = flopscope(
        "profile", *host, "--ncu", make_ncu(tmp_path), "--modules", "--no-tui", "--name", "step",
        "--", sys.executable, str(script), str(calls),
        home=tmp_path / "home",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(calls.read_text()) == [
        "step 1", "Sequential", "0", "1", "2",
        "2 [backward]", "Sequential [backward]", "1 [backward]", "0 [backward]", "step 2",
    ]  # fmt: skip
    run = json.loads((tmp_path / "home" / "runs" / "step" / "run.json").read_text())
    assert "--nvtx" in run["ncu_argv"]
    assert Path(run["env"]["PYTHONPATH"].split(":")[0]).name == "hooks"


def test_without_modules_the_program_gets_no_hooks(tmp_path):
    script, calls = tmp_path / "train.py", tmp_path / "calls.json"
    script.write_text(PROGRAM)
    out = flopscope(
        "profile", "--ncu", make_ncu(tmp_path), "--no-tui", "--name", "plain",
        "--", sys.executable, str(script), str(calls),
        home=tmp_path / "home",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(calls.read_text()) == []
    assert (
        "--nvtx"
        not in json.loads((tmp_path / "home" / "runs" / "plain" / "run.json").read_text())[
            "ncu_argv"
        ]
    )


TWO_STEPS = """
import os, sys, torch
from torch import nn

class Recorder:
    def range_push(self, name): pass
    def range_pop(self): pass
    def range_start(self, name): return 1
    def range_end(self, range_id): pass

torch.cuda.nvtx = Recorder()
# which run this is: the timing run is told where to write its step times
with open(sys.argv[1], "a") as log:
    log.write("timed\\n" if os.environ.get("FLOPSCOPE_STEP_TIMES") else "profiled\\n")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    model(torch.ones(3, 4)).sum().backward()
    opt.step()
"""


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_modules_runs_the_program_again_without_ncu_and_stores_its_step_times(
    tmp_path, request, where
):
    script, runs = tmp_path / "train.py", tmp_path / "runs.log"
    script.write_text(TWO_STEPS)
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    out = flopscope(
        "profile", *host, "--ncu", make_ncu(tmp_path), "--modules", "--no-tui", "--name", "timed",
        "--", sys.executable, str(script), str(runs),
        home=tmp_path / "home",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    # under the ncu stand-in, then alone
    assert runs.read_text().splitlines() == ["profiled", "timed"]
    folder = tmp_path / "home" / "runs" / "timed"
    steps = json.loads((folder / "timing.json").read_text())["steps"]
    assert [s["step"] for s in steps] == [1, 2] and all(0 < s["wall_s"] < 60 for s in steps)
    said = [ln for ln in out.stderr.splitlines() if "timing run without ncu: 2 step(s)" in ln]
    assert len(said) == 1 and f"median wall {steps[1]['wall_s']:.4g} s after the first" in said[0]
    assert any(
        "timing run without ncu" in note
        for note in json.loads((folder / "run.json").read_text())["notes"]
    )
    # the stored run's report finds them: its launches have no step ranges (the stand-in replays a
    # capture without them), so the steps are the timing run's alone
    doc = json.loads(
        flopscope("report", "timed", "--by", "module", "--json", home=tmp_path / "home").stdout
    )
    assert [(s["step"], s["wall_s"]) for s in doc["steps"]["steps"]] == [
        (s["step"], s["wall_s"]) for s in steps
    ]


def test_no_timing_runs_the_program_once(tmp_path):
    script, runs = tmp_path / "train.py", tmp_path / "runs.log"
    script.write_text(TWO_STEPS)
    out = flopscope(
        "profile", "--ncu", make_ncu(tmp_path), "--modules", "--no-timing", "--no-tui",
        "--name", "once",
        "--", sys.executable, str(script), str(runs),
        home=tmp_path / "home",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert runs.read_text().splitlines() == ["profiled"]
    assert not (tmp_path / "home" / "runs" / "once" / "timing.json").exists()
    assert "timing run" not in out.stderr


def test_no_timing_without_modules_is_one_line_and_runs_nothing(tmp_path):
    out = flopscope(
        "profile", "--ncu", make_ncu(tmp_path), "--no-timing", "--no-tui",
        "--", sys.executable, "-c", "pass",
        home=tmp_path / "home",
    )  # fmt: skip
    assert (
        one_error_line(out)
        == "flopscope: --no-timing: skips the timing run, which only --modules makes; leave it out"
    )
    assert not (tmp_path / "home" / "runs").exists()


# The timing run never ends (a program that waits on input, a server): the profiled run does.
HANGS = """
import os, sys, time

with open(sys.argv[1], "a") as log:
    log.write("timed\\n" if os.environ.get("FLOPSCOPE_STEP_TIMES") else "profiled\\n")
if os.environ.get("FLOPSCOPE_STEP_TIMES"):
    time.sleep(300)
"""


def test_a_timing_run_past_its_limit_is_stopped_in_one_line_and_the_profile_kept(tmp_path):
    script, runs = tmp_path / "serve.py", tmp_path / "runs.log"
    script.write_text(HANGS)
    started = time.monotonic()
    out = flopscope(
        "profile", "--ncu", make_ncu(tmp_path), "--modules", "--timing-limit", "2", "--no-tui",
        "--name", "held", "--", sys.executable, str(script), str(runs),
        home=tmp_path / "home",
    )  # fmt: skip
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert took < 60  # not the program's 300 s
    assert runs.read_text().splitlines() == ["profiled", "timed"]
    said = [ln for ln in out.stderr.splitlines() if "timing run" in ln and "limit" in ln]
    assert len(said) == 1 and "stopped at its time limit, 2 s (--timing-limit" in said[0]
    folder = tmp_path / "home" / "runs" / "held"
    assert (folder / "report.ncu-rep").is_file() and not (folder / "timing.json").exists()
    stored = json.loads(flopscope("runs", "--json", home=tmp_path / "home").stdout)
    assert [r["name"] for r in stored] == ["held"]


@pytest.mark.parametrize("flags", [[], ["--modules", "--no-timing"]])
def test_a_timing_limit_without_a_timing_run_is_one_line_and_runs_nothing(tmp_path, flags):
    out = flopscope(
        "profile", "--ncu", make_ncu(tmp_path), *flags, "--timing-limit", "30", "--no-tui",
        "--", sys.executable, "-c", "pass",
        home=tmp_path / "home",
    )  # fmt: skip
    assert one_error_line(out) == (
        "flopscope: --timing-limit 30: limits the timing run, which only --modules makes (and"
        " --no-timing skips); leave it out"
    )
    assert not (tmp_path / "home" / "runs").exists()
