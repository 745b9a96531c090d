"""`diff --by module` and `check --by module`: the module trees of two training steps of one
transformer block (batch 8 and 32, H100, tests/data/gpu) matched node by node on their path.
Expected figures are summed here from each report's launches by their NVTX ranges
(tests/helpers/modules.py), not by the code under test."""

from __future__ import annotations

import json

import pytest

from ..helpers.cli import run_cli
from ..helpers.modules import TOP_MODULES, module_launches
from ..helpers.real_files import H100, report_of

A, B = (
    H100 / "train_transformer_bf16_bs8.ncu-rep.xz",
    H100 / "train_transformer_bf16_bs32.ncu-rep.xz",
)


def _per_module(path) -> dict[str, tuple[int, float]]:
    """Per top module of the block: (launches, seconds) of its forward and backward launches."""
    k = report_of(path).kernels
    return {
        m: (
            int(module_launches(k, m).sum()),
            float(k.loc[module_launches(k, m), "duration_s"].sum()),
        )
        for m in TOP_MODULES
    }


@pytest.fixture
def stored(tmp_path):
    home = tmp_path / "home"
    for path, name in ((A, "bs8"), (B, "bs32")):
        done = run_cli("import", path, "--name", name, home=home)
        assert done.returncode == 0, done.stderr
    return home


def test_diff_by_module_matches_each_node_by_path(stored):
    done = run_cli("diff", "bs8", "bs32", "--by", "module", "--json", home=stored)
    assert done.returncode == 0, done.stderr
    rows = {r["path"]: r for r in json.loads(done.stdout)["rows"]}
    a, b = _per_module(A), _per_module(B)
    for module in TOP_MODULES:
        row = rows[f"measure/forward/{module}"]
        assert (row["count_a"], row["count_b"]) == (a[module][0], b[module][0]), module
        assert row["duration_s_a"] == pytest.approx(a[module][1], rel=1e-9), module
        assert row["duration_s_b"] == pytest.approx(b[module][1], rel=1e-9), module
        assert row["duration_s_delta"] == pytest.approx(b[module][1] - a[module][1], rel=1e-9), (
            module
        )
        assert row["depth"] == 3 and row["presence"] == "both"
    root = rows[""]
    assert (root["count_a"], root["count_b"]) == (
        len(report_of(A).kernels),
        len(report_of(B).kernels),
    )
    assert root["kernel"] == "(all launches)" and root["depth"] == 0
    order = [r["path"] for r in json.loads(done.stdout)["rows"]]
    for at, path in enumerate(order[1:], 1):  # depth first: each node after its parent
        assert path.rpartition("/")[0] in order[:at]


def test_diff_by_module_prints_the_nodes_by_path(stored):
    done = run_cli("diff", "bs8", "bs32", "--by", "module", "--no-tui", home=stored, columns=160)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].split()[0] == "Module"
    assert {line.split()[0] for line in lines[2:]} >= {f"measure/forward/{m}" for m in TOP_MODULES}
    assert "module node(s)" in done.stdout and "depth first" in done.stdout


def test_check_by_module_judges_each_node_on_its_share_and_time_per_launch():
    base, run = _per_module(A), _per_module(B)
    total = float(report_of(A).kernels["duration_s"].sum())
    change = {m: (run[m][1] / run[m][0]) / (base[m][1] / base[m][0]) - 1 for m in TOP_MODULES}
    # between the second and third change: two regress, two pass
    threshold = sorted(change.values())[1:3]
    limit = sum(threshold) / 2
    done = run_cli(
        "check", B, "--baseline", A, "--by", "module", "--max-drop", f"{100 * limit:.4f}%", "--json"
    )
    assert done.returncode == 1, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["by"] == "module" and verdict["passed"] is False
    rows = {r["kernel"]: r for r in verdict["rows"]}
    for module in TOP_MODULES:
        row = rows[f"measure/forward/{module}"]
        assert row["share"] == pytest.approx(base[module][1] / total, rel=1e-9), module
        assert row["time_per_launch_s_change"] == pytest.approx(change[module], rel=1e-9), module
        # The larger batch does more FLOPs per launch: only time per launch can move the wrong way.
        assert (row["verdict"] == "regressed") == (change[module] > limit), module
    assert rows["(all launches)"]["share"] == pytest.approx(1.0)
    text = run_cli("check", B, "--baseline", A, "--by", "module", "--max-drop", "99%", columns=250)
    header = next(line.split() for line in text.stdout.splitlines() if line.startswith("Verdict"))
    assert header[1] == "Module"
