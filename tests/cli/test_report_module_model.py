"""`report --by module --model MODEL.json`: the analytic FLOPs of `flopscope model --json` beside
each module's measured FLOPs in the tree, on the project's H100 FP32 transformer training step
(tests/data/gpu) and the model it ran (workloads.py's Block): each node named after a module gets
that module's forward + backward FLOPs per step from the model's own JSON, times the steps the
report holds; other nodes none."""

from __future__ import annotations

import json

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import one_error_line
from ..helpers.reconciled import WORKLOADS
from ..helpers.steps import TRAIN_STEP, two_step_page

pytest.importorskip("torch", reason="PyTorch is not installed")


@pytest.fixture(scope="module")
def model_json(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "block.json"
    out = flopscope(
        "model", f"{WORKLOADS}:Block", "--input-shape", "8,128,512", "--train", "--json"
    )
    assert out.returncode == 0, out.stderr
    path.write_text(out.stdout)
    return path


def _nodes(rows: list[dict]) -> list[dict]:
    return [n for row in rows for n in [row, *_nodes(row["children"])]]


def _per_step(model_json) -> dict[str, float]:
    doc = json.loads(model_json.read_text())
    return {m["name"]: m["forward_flop"] + m["backward_flop"] for m in doc["modules"]}


@pytest.mark.parametrize("steps", [1, 2])
def test_each_module_node_has_its_analytic_flops_over_the_steps_held(tmp_path, model_json, steps):
    page = TRAIN_STEP if steps == 1 else two_step_page(tmp_path / "raw.csv", steps=steps)
    out = flopscope("report", page, "--by", "module", "--model", model_json, "--json")
    assert out.returncode == 0, out.stderr
    nodes = {n["path"]: n for n in _nodes(json.loads(out.stdout)["rows"])}
    analytic = _per_step(model_json)
    modules = {p: n for p, n in nodes.items() if n["name"] in analytic}
    assert {n["name"] for n in modules.values()} >= {"attn", "mlp", "norm1", "norm2"}
    for node in modules.values():
        assert node["model_flop"] == steps * analytic[node["name"]]
        expected = node["flop"] / node["model_flop"] if node["model_flop"] else None
        assert node["flop_vs_model"] == (pytest.approx(expected) if expected is not None else None)
    others = [n for p, n in nodes.items() if p not in modules]
    assert others and all(n["model_flop"] is None and n["flop_vs_model"] is None for n in others)


def test_the_printed_tree_has_the_model_and_ratio_columns(model_json):
    out = flopscope(
        "report", TRAIN_STEP, "--by", "module", "--model", model_json, "--depth", "3", columns=200
    )
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if line.startswith("Module"))
    assert header.split()[-2:] == ["Model", "/Model"]
    mlp = next(line for line in out.stdout.splitlines() if line.strip().startswith("mlp "))
    analytic = _per_step(model_json)["mlp"]
    assert mlp.split()[-3:-1] == [f"{analytic / 1e9:.3g}", "G"]


def test_model_without_by_module_and_a_file_that_is_no_model_are_one_line(tmp_path):
    line = one_error_line(flopscope("report", TRAIN_STEP, "--model", "block.json"))
    assert "--model block.json: is for the module tree" in line and "--by module" in line
    bad = tmp_path / "model.json"
    bad.write_text('{"model": 1}')
    line = one_error_line(flopscope("report", TRAIN_STEP, "--by", "module", "--model", bad))
    assert str(bad) in line and "not the JSON of `flopscope model --json`" in line


def test_reconcile_takes_its_step_time_from_the_timing_run_unless_given(tmp_path, model_json):
    import statistics

    from ..helpers.steps import write_timing

    page = two_step_page(tmp_path / "raw.csv", steps=3)
    walls = {1: 0.0412, 2: 0.00311, 3: 0.00297}
    write_timing(tmp_path, walls)
    args = ["reconcile", page, "--model", model_json, "--steps", "3", "--json"]
    doc = json.loads(flopscope(*args).stdout)
    wall = statistics.median([walls[2], walls[3]])  # step 1, the warm-up, left out
    assert doc["step_time_s"] == pytest.approx(wall, rel=1e-12)
    assert (
        "timing run without ncu" in doc["step_time_source"]
        and "median of 2 step(s)" in doc["step_time_source"]
    )
    assert doc["utilization_measured"] == pytest.approx(
        doc["measured_step"] / (wall * doc["peak_flop_per_s"]), rel=1e-9
    )
    given = json.loads(flopscope(*args, "--step-time", "0.01").stdout)
    assert given["step_time_s"] == 0.01 and given["step_time_source"] == "--step-time"
