"""`profile --modules`' hooks on CPU torch, with a recording stand-in for torch.cuda.nvtx (ncu and a
GPU are not here): the exact push/pop/start/end sequence of a nested model over two training steps,
in process and injected as a program's sitecustomize; a program that is not PyTorch runs unchanged,
with one warning line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

from flopscope.core.profiling.module_ranges import annotate, sitecustomize_source  # noqa: E402

MODEL = """
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Linear(4, 4)
        self.mlp = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4))

    def forward(self, x):
        return self.mlp(self.attn(x))
"""
RECORDER = """
calls = []

class Recorder:
    def __init__(self):
        self.next_id = 100

    def range_push(self, name):
        calls.append(["push", name])

    def range_pop(self):
        calls.append(["pop"])

    def range_start(self, name):
        self.next_id += 1
        calls.append(["start", name, self.next_id])
        return self.next_id

    def range_end(self, range_id):
        calls.append(["end", range_id])
"""
TRAIN = """
model = Block()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    model(torch.ones(2, 4)).sum().backward()
    opt.step()
    opt.zero_grad()
"""


def _step(first: int) -> list[list]:
    """One training step of Block, its ranges numbered from FIRST. The forward nests as the modules
    call each other. A module's backward range opens when its output's gradient arrives (hooks on
    one tensor run in the order they were registered: mlp.2's output is mlp's and Block's) and
    closes when its input's gradient is done, which for Block and attn (their input needs none) is
    at optimizer.step(), innermost first, with the step."""
    s, m2, m, b, m1, m0, a = range(first, first + 7)
    forward = [["push", "Block"], ["push", "attn"], ["pop"], ["push", "mlp"]]
    forward += [
        ["push", "mlp.0"],
        ["pop"],
        ["push", "mlp.1"],
        ["pop"],
        ["push", "mlp.2"],
        ["pop"],
        ["pop"],
        ["pop"],
    ]
    backward = [
        ["start", "mlp.2 [backward]", m2],
        ["start", "mlp [backward]", m],
        ["start", "Block [backward]", b],
    ]
    backward += [
        ["start", "mlp.1 [backward]", m1],
        ["end", m2],
        ["start", "mlp.0 [backward]", m0],
        ["end", m1],
    ]
    backward += [["start", "attn [backward]", a], ["end", m], ["end", m0], ["end", a], ["end", b]]
    return [["start", f"step {(first - 101) // 7 + 1}", s], *forward, *backward, ["end", s]]


EXPECTED = [*_step(101), *_step(108), ["start", "step 3", 115], ["end", 115]]


def test_two_steps_of_a_nested_model_in_process(monkeypatch):
    scope: dict = {"torch": torch}
    exec(RECORDER + MODEL, scope)
    monkeypatch.setattr(torch.cuda, "nvtx", scope["Recorder"]())
    with annotate(torch):
        exec(TRAIN, scope)
    assert scope["calls"] == EXPECTED


def test_annotate_names_a_model_built_before_the_block(monkeypatch):
    scope: dict = {"torch": torch}
    exec(RECORDER + MODEL, scope)
    monkeypatch.setattr(torch.cuda, "nvtx", scope["Recorder"]())
    model = scope["Block"]()
    with annotate(torch, model):
        model(torch.ones(2, 4)).sum().backward()
    names = [c[1] for c in scope["calls"] if c[0] in ("push", "start")]
    assert names == ["step 1", "Block", "attn", "mlp", "mlp.0", "mlp.1", "mlp.2"] + [
        f"{n} [backward]" for n in ("mlp.2", "mlp", "Block", "mlp.1", "mlp.0", "attn")
    ]


def _program_env(tmp_path, hooks_first: bool = True) -> dict:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(sitecustomize_source())
    site = tmp_path / "site"  # a site's own sitecustomize, which ours shadows and must still run
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['SITE_CUSTOMIZED'] = 'yes'\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(hooks), str(site)])}


def test_injected_as_sitecustomize_a_training_script_gets_the_same_ranges(tmp_path):
    script = tmp_path / "train.py"
    program = (
        "import json, os, torch\n" + RECORDER + "torch.cuda.nvtx = Recorder()\n" + MODEL + TRAIN
    )
    program += "print(json.dumps({'calls': calls, 'site': os.environ.get('SITE_CUSTOMIZED')}))\n"
    script.write_text(textwrap.dedent(program))
    done = subprocess.run(
        [sys.executable, str(script)], env=_program_env(tmp_path), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["site"] == "yes"
    assert out["calls"] == EXPECTED[:-1]  # printed inside step 3, whose range ends at exit


def test_a_program_without_torch_runs_unchanged_with_one_warning_line(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("import sys\nprint('hello', sys.argv[1:])\n")
    done = subprocess.run(
        [sys.executable, str(script), "a b"],
        env=_program_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout == "hello ['a b']\n"
    assert done.stderr.splitlines() == [
        "flopscope: --modules: the program never imported torch, so no module ranges were recorded"
    ]


def test_the_timing_run_writes_each_whole_steps_wall_time(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n" + RECORDER + "torch.cuda.nvtx = Recorder()\n" + MODEL + TRAIN
    )
    times = tmp_path / "times.json"
    env = {**_program_env(tmp_path), "FLOPSCOPE_STEP_TIMES": str(times)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    steps = json.loads(times.read_text())["steps"]
    assert [s["step"] for s in steps] == [1, 2] and all(0 < s["wall_s"] < 60 for s in steps)


def test_flopscope_torch_annotate_is_the_public_call(monkeypatch):
    import flopscope.torch

    scope: dict = {"torch": torch}
    exec(RECORDER + MODEL, scope)
    monkeypatch.setattr(torch.cuda, "nvtx", scope["Recorder"]())
    model = scope["Block"]()
    with flopscope.torch.annotate(model):
        model(torch.ones(2, 4))
    assert [c[1] for c in scope["calls"] if c[0] == "push"] == [
        "Block",
        "attn",
        "mlp",
        "mlp.0",
        "mlp.1",
        "mlp.2",
    ]


def test_a_module_that_writes_in_place_keeps_working(monkeypatch):
    """Full backward hooks wrap a module's output; autograd then refuses `ReLU(inplace=True)`
    writing it (it did)."""
    scope: dict = {"torch": torch}
    exec(RECORDER, scope)
    monkeypatch.setattr(torch.cuda, "nvtx", scope["Recorder"]())
    with annotate(torch):
        model = torch.nn.Sequential(
            torch.nn.Linear(4, 4), torch.nn.ReLU(inplace=True), torch.nn.Linear(4, 1)
        )
        model(torch.ones(2, 4)).sum().backward()
    started = [c[1] for c in scope["calls"] if c[0] == "start"]
    assert {"0 [backward]", "2 [backward]", "Sequential [backward]"} <= set(started)


class _TimedCuda:
    """torch.cuda as the timing run sees it on a GPU: available, and each synchronize recorded with
    the clock it preceded (the hooks must wait for the GPU before reading the clock)."""

    def __init__(self, nvtx, clock):
        self.nvtx, self.clock, self.synced = nvtx, clock, []

    def is_available(self):
        return True

    def synchronize(self):
        self.synced.append(self.clock.now)


class _Clock:
    """time.perf_counter moved by hand: each reading 0.25 s after the one before, so every step's
    wall time is the readings apart."""

    def __init__(self):
        self.now, self.readings = 10.0, []

    def __call__(self):
        self.now += 0.25
        self.readings.append(self.now)
        return self.now


def test_the_timing_run_synchronises_then_reads_the_clock_at_each_step_end(monkeypatch, tmp_path):
    import types

    from flopscope.core.profiling import module_ranges

    scope: dict = {"torch": torch}
    exec(RECORDER + MODEL, scope)
    clock = _Clock()
    monkeypatch.setattr(module_ranges.time, "perf_counter", clock)
    cuda = _TimedCuda(scope["Recorder"](), clock)
    ranges = module_ranges.ModuleRanges(types.SimpleNamespace(cuda=cuda), timed=True)
    ranges.install()
    try:
        exec(TRAIN, scope)
    finally:
        ranges.remove()
    ranges.write_times(str(tmp_path / "times.json"))
    steps = json.loads((tmp_path / "times.json").read_text())["steps"]
    # step 1 opens at the first module call, each optimizer.step() closes one and opens the next;
    # the third (cut short by the end) has no wall time
    t = clock.readings
    assert steps == [{"step": 1, "wall_s": t[1] - t[0]}, {"step": 2, "wall_s": t[3] - t[2]}]
    assert cuda.synced == [10.0, *t[:-1]]  # a synchronize before every reading of the clock
    assert [c[1] for c in scope["calls"] if c[0] == "start" and c[1].startswith("step")] == [
        "step 1",
        "step 2",
        "step 3",
    ]
