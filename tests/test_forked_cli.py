"""The tests' forked CLI (tests/helpers/forked_cli.py) prints and exits as `python -m
flopscope.tui.cli` does: each command run both ways, outputs compared byte for byte."""

from __future__ import annotations

import os
import subprocess

import pytest

from .helpers import forked_cli
from .helpers.cli import CLI

DEMO = "tui/examples/train_transformer_bf16_bs8.ncu-rep.xz"


def _fresh(args: list[str], env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["report", DEMO, "--top", "3"],
        ["report", DEMO, "--top", "2", "--json"],
        ["report", "no/such/file.csv"],
        ["report", DEMO, "--no-such-option"],
        ["report", "-"],
        ["model", "mlp", "--train", "--json"],  # the server with torch (WITH_LAZY too)
    ],
    ids=["version", "report", "json", "missing file", "bad option", "stdin /dev/null", "model"],
)
def test_a_forked_command_prints_and_exits_as_a_fresh_interpreter(args, tmp_path):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {
        **os.environ,
        "FLOPSCOPE_HOME": str(tmp_path / "home"),
        "COLUMNS": "120",
        "FLOPSCOPE_NO_CACHE": "1",
    }
    assert forked_cli.can_fork(env)
    forked = forked_cli.run(args, env, repo, -1, 120)
    fresh = _fresh(args, env, repo)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )


def test_an_interpreter_setting_in_the_environment_gets_a_fresh_interpreter():
    assert not forked_cli.can_fork({**os.environ, "PYTHONPATH": "/elsewhere"})
    assert not forked_cli.can_fork({**os.environ, "LC_ALL": "C.ISO-8859-1"})
    assert forked_cli.can_fork({k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})


def test_a_command_that_imported_torch_runs_on_a_server_with_torch_from_then_on(tmp_path):
    """torch is not imported for commands that do not import it; `model` finds it imported, and so
    does a command the second time once its first run has imported it."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
    report, model = ["report", DEMO, "--top", "1"], ["model", "mlp", "--input-shape", "2,784"]
    forked_cli._lazy_commands.discard("model")  # as a command not known to need torch
    try:
        found = []
        for args in (report, model, model, report):
            done = forked_cli.run(args, env, None, -1, 300)
            assert done.returncode == 0, done.stderr
            found.append(done.preloaded)
    finally:
        forked_cli._lazy_commands.add("model")
    assert found == [[], [], ["torch"], []]
