"""`report --by module` and `export --by module` on the bundled training step: the tree printed,
nested in JSON, written with its path and depth, and what a report without NVTX ranges says."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from ..helpers.cli import run_cli
from ..helpers.real_files import DEMO, H100, real_files, report_of

MODULES = {"attn", "mlp.0", "mlp.1", "mlp.2", "norm1", "norm2"}


def test_the_printed_tree_nests_each_module_under_its_parent():
    done = run_cli("report", DEMO, "--by", "module", columns=160)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Module"))
    indent = {
        line.split()[0]: len(line) - len(line.lstrip())
        for line in lines[at + 1 :]
        if line.startswith(" ")
    }
    assert set(indent) >= MODULES
    assert (
        indent["mlp.0"] == indent["mlp"] + 2
        and indent["attn"] == indent["mlp"] == indent["forward"] + 2
    )
    assert lines[at + 1].startswith("(all launches)")


def test_json_rows_nest_children_and_each_node_sums_them():
    done = run_cli("report", DEMO, "--by", "module", "--json")
    assert done.returncode == 0, done.stderr
    (root,) = json.loads(done.stdout)["rows"]
    assert root["count"] == len(report_of(DEMO).kernels)

    def walk(node):
        kids = node["children"]
        if kids:
            assert node["duration_s"] == pytest.approx(
                node["own_duration_s"] + sum(k["duration_s"] for k in kids)
            )
        yield node
        for kid in kids:
            yield from walk(kid)

    names = {node["name"]: node for node in walk(root)}
    assert set(names) >= MODULES
    assert names["mlp.0"]["path"] == "measure/forward/mlp/mlp.0" and names["mlp.0"]["depth"] == 4


def test_depth_cuts_the_tree_and_export_writes_path_and_depth(tmp_path):
    out = tmp_path / "tree.csv"
    done = run_cli("export", DEMO, "--by", "module", "--depth", "3", "-o", out)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open(newline="")))
    assert max(int(r["depth"]) for r in rows) == 3
    assert {r["path"] for r in rows} >= {"", "measure", "measure/forward", "measure/forward/attn"}
    assert "mlp.0" not in {r["name"] for r in rows}


def test_a_report_without_nvtx_ranges_says_what_fills_the_tree():
    path = next(p for p in real_files() if report_of(p).kernels["nvtx"].isna().all())
    done = run_cli("report", path, "--by", "module")
    assert done.returncode == 0
    assert "has no NVTX ranges" in done.stderr and "flopscope profile --modules -- " in done.stderr


def test_the_raw_page_of_the_same_step_prints_the_same_tree():
    page = H100 / "train_transformer_bf16_bs8.csv.gz"
    rows = [
        json.loads(run_cli("report", p, "--by", "module", "--json").stdout)["rows"]
        for p in (page, DEMO)
    ]
    assert [r["count"] for r in rows[0]] == [r["count"] for r in rows[1]]


NO_RANGES = H100 / "gemm_bf16_full.ncu-rep.xz"  # one GEMM launch, captured without NVTX ranges


def test_a_file_without_nvtx_ranges_names_profile_modules_with_a_program_to_put_in():
    assert report_of(NO_RANGES).kernels["nvtx"].isna().all()
    done = run_cli("report", NO_RANGES, "--by", "module")
    assert done.returncode == 0, done.stderr
    assert (
        "`flopscope profile --modules -- python train.py` (your program in the place of"
        in done.stderr
    )


def test_a_stored_run_without_nvtx_ranges_names_the_exact_command_that_fills_its_tree(tmp_path):
    """A run folder as `flopscope profile` leaves it (run.json: the program and the host it ran on),
    imported: its tree's hint is that very command with --modules, quoted for a shell."""
    folder = tmp_path / "bench-run"
    folder.mkdir()
    shutil.copy(NO_RANGES, folder / "report.ncu-rep.xz")
    command = ["python3", "bench.py", "--shape", "4096 4096"]
    (folder / "run.json").write_text(json.dumps({"command": command, "host": "gpu7", "started": 0}))
    home = tmp_path / "home"
    assert run_cli("import", folder, home=home).returncode == 0
    done = run_cli("report", "bench-run", "--by", "module", home=home)
    assert done.returncode == 0, done.stderr
    expected = "flopscope profile --modules --host gpu7 -- python3 bench.py --shape '4096 4096'"
    assert f"`{expected}` (the command it was profiled with" in done.stderr
