"""`flopscope profile --modules` here and over SSH: ncu gets its NVTX support, and the program, run as given,
gets the module hooks as its sitecustomize (ncu is the replaying stand-in: no GPU here; the program is a CPU
PyTorch training step with a recording stand-in for torch.cuda.nvtx)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import make_ncu, remote

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
def test_the_program_runs_unchanged_with_module_ranges_and_ncu_records_nvtx(tmp_path, request, where):
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
    assert "--nvtx" not in json.loads((tmp_path / "home" / "runs" / "plain" / "run.json").read_text())["ncu_argv"]
