"""Issue 40: `flopscope open FILE --model MODEL.json` (and `demo --model`) start the app on the
module tree with the model's analytic FLOPs beside each module, as `m` there puts them; piped, it
prints what `report --by module --model` prints; a file that is no model JSON is one line, exit 2,
before any app. The report is a real H100 step played three times with a timing file
(tests/helpers/steps.py), the model JSON written by the real `flopscope model` (model_json.py)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.model_flops import load_model_json
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.kernels import KernelsScreen
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.presentation import format as fmt

from ..conftest import settle
from ..helpers.app import screen_lines
from ..helpers.cli import run_cli
from ..helpers.model_json import analytic_flops, block_model_json
from ..helpers.steps import two_step_page, write_timing
from ..helpers.tmux import Tmux

MODULES = ("attn", "mlp", "norm1", "norm2")
STEPS = 3


@pytest.fixture(scope="module")
def model_json(tmp_path_factory):
    return block_model_json(tmp_path_factory.mktemp("model"))


@pytest.fixture
def page(tmp_path):
    out = two_step_page(tmp_path / "raw.csv", steps=STEPS)
    write_timing(tmp_path, {1: 0.0412, 2: 0.00311, 3: 0.00297})
    return out


def _cli_nodes(page, model_json) -> dict[str, dict]:
    done = run_cli("report", page, "--by", "module", "--model", model_json, "--json")
    assert done.returncode == 0, done.stderr

    def walk(rows):
        return [n for row in rows for n in [row, *walk(row["children"])]]

    return {n["name"]: n for n in walk(json.loads(done.stdout)["rows"])}


def _shown(module: str, flop: float, ratio: float) -> str:
    return f"model {fmt.si(flop)} ×{fmt.ratio(ratio)}"


def _node_line(app, module: str) -> str:
    lines = [" ".join(line.replace("▌", " ").split()) for line in screen_lines(app)]
    return next(line for line in lines if f" {module} " in f" {line} ".replace("─", " "))


async def test_the_app_starts_on_the_tree_with_the_models_flops(page, model_json):
    """No key pressed: the module tree is up over the Kernels screen, each module's analytic FLOPs
    (the JSON's, times the steps) and measured / analytic in its line; escape is the Kernels
    screen, and the tree `g` opens from there has them too."""
    analytic = analytic_flops(model_json)
    nodes = _cli_nodes(page, model_json)
    report = read_report(page)
    app = kernels_app(page, report=report, flop_model=load_model_json(model_json))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
        await pilot.press("asterisk")
        await pilot.pause()
        first = {m: _node_line(app, m) for m in MODULES}
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, KernelsScreen))
        await pilot.press("g", "g")
        await settle(pilot, lambda: app.kernels.by == "nvtx")
        await pilot.press("g")
        await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
        await pilot.press("asterisk")
        await pilot.pause()
        again = {m: _node_line(app, m) for m in MODULES}
    for module in MODULES:
        flop = STEPS * analytic[module]
        assert nodes[module]["model_flop"] == flop
        shown = _shown(module, flop, nodes[module]["flop_vs_model"])
        assert shown in first[module], first[module]
        assert shown in again[module], again[module]


def test_piped_it_prints_the_module_tree_with_the_model(page, model_json):
    """Not on a terminal, `open --model` prints `report --by module --model`'s document."""
    opened = run_cli("open", page, "--model", model_json, "--json")
    reported = run_cli("report", page, "--by", "module", "--model", model_json, "--json")
    assert opened.returncode == reported.returncode == 0, opened.stderr + reported.stderr
    assert json.loads(opened.stdout)["rows"] == json.loads(reported.stdout)["rows"]
    assert json.loads(opened.stdout)["rows"][0]["children"]


@pytest.mark.parametrize("command", ["open", "demo"])
@pytest.mark.parametrize(
    "content", ['{"model": 1}', "not json at all", None], ids=["not-a-model", "not-json", "missing"]
)
def test_a_bad_model_json_is_one_line_exit_2(page, tmp_path, command, content):
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    argv = ["open", page] if command == "open" else ["demo"]
    done = run_cli(*argv, "--model", bad)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line, line
    assert str(bad) in line and "not the JSON of `flopscope model --json`" in line
    assert "flopscope model ... --json > FILE" in line  # the fix
    assert not done.stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_flopscope_open_with_a_model_in_a_terminal(page, model_json, tmp_path):
    """The command itself at 80x24: the tree with the model's FLOPs is the first screen."""
    analytic = analytic_flops(model_json)
    tmux, status = Tmux(), tmp_path / "exit"
    command = (
        f"env FLOPSCOPE_HOME={shlex.quote(str(tmp_path))} TERM=xterm-256color"
        f" {shlex.quote(sys.executable)} -m flopscope.tui.cli open {shlex.quote(str(page))}"
        f" --model {shlex.quote(str(model_json))}; echo $? > {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "80", "-y", "24", command)
    try:
        tmux.wait_for("by module", timeout=60)  # the first screen, no key pressed
        tmux("send-keys", "-t", "app", "*")  # every node open
        tmux.wait_for(f"model {fmt.si(STEPS * analytic['attn'])} ×")
        tmux("send-keys", "-t", "app", "Escape")
        tmux.wait_for("rows · by name")  # the Kernels screen's status line
        tmux("send-keys", "-t", "app", "q")
        deadline = time.monotonic() + 30
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "0"
    finally:
        tmux("kill-server")
