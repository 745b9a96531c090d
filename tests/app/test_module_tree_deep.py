"""Issue 40: at 80x24 a deep node of the module tree keeps its figures. A real step's modules pushed
four levels down (tests/helpers/deep_tree.py: `mlp.0` eight levels below the root), opened with a
model JSON (`open --model`): each module's line shows its time, its MFU over kernel time and the
model's FLOPs with measured / analytic whole, the lower-value parts dropped to make room, and no
line is wider than the screen. Figures from the CLI's `--json` and the model JSON read with
`json`."""

from __future__ import annotations

import json

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.model_flops import load_model_json
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.presentation import format as fmt

from ..conftest import settle
from ..helpers.app import screen_lines
from ..helpers.cli import run_cli
from ..helpers.deep_tree import LEVELS, deep_steps_page
from ..helpers.model_json import analytic_flops, block_model_json
from ..helpers.snapshots import SIZE, check

MODULES = ("attn", "mlp", "mlp.0", "mlp.2", "norm1", "norm2")


@pytest.fixture(scope="module")
def model_json(tmp_path_factory):
    return block_model_json(tmp_path_factory.mktemp("model"))


def _nodes(page, model_json) -> dict[str, dict]:
    done = run_cli("report", page, "--by", "module", "--model", model_json, "--json")
    assert done.returncode == 0, done.stderr

    def walk(rows):
        return [n for row in rows for n in [row, *walk(row["children"])]]

    return {n["name"]: n for n in walk(json.loads(done.stdout)["rows"])}


async def test_a_deep_nodes_figures_fit_80_columns(
    tmp_path, monkeypatch, model_json, snapshot_update
):
    page = deep_steps_page(tmp_path)
    nodes = _nodes(page, model_json)
    analytic = analytic_flops(model_json)
    assert nodes["mlp.0"]["depth"] == 2 + len(LEVELS) + 2  # measure, forward, LEVELS, mlp, mlp.0
    monkeypatch.chdir(tmp_path)  # the breadcrumb names the file: the same in every run
    report = read_report(page.name)
    app = kernels_app(page.name, report=report, flop_model=load_model_json(model_json))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
        await pilot.press("asterisk")
        await pilot.pause(0.1)
        raw = screen_lines(app)
        svg = app.export_screenshot()
    assert all(len(line) <= SIZE[0] for line in raw)
    lines = [" ".join(line.replace("▌", " ").split()) for line in raw]
    for module in MODULES:
        node = nodes[module]
        line = next(x for x in lines if f" {module} " in f" {x} ".replace("─", " "))
        model = f"model {fmt.si(3 * analytic[module])} ×{fmt.ratio(node['flop_vs_model'])}"
        assert model in line, line
        assert f"MFU krn {fmt.share(node['mfu_kernel'])}" in line, line
        assert fmt.seconds(node["duration_s"]) in line, line
    check("module-tree-deep-model", svg, snapshot_update, tmp_path)
