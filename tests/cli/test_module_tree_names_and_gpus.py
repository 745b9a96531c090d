"""`report --by module` from the launches' structured NVTX stacks: a range name holding `/` and `:`
is one node (the H100 training step's raw page with its `attn` ranges renamed), and a file of two
GPUs is split per GPU under the root, each GPU's figures those read from the page with `csv`
alone."""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict

import pytest
from flopscope.core import read_report

from ..helpers.cli import run_cli
from ..helpers.raw_csv import SECONDS
from ..helpers.renamed_range import RENAMED, renamed_page, source_text
from ..helpers.two_gpu_capture import time_per_gpu, two_gpu_page

MODULES = ("attn", "norm1", "norm2", "mlp.0", "mlp.1", "mlp.2")
_PUSHED = re.compile(r'"<default domain>:(.*?):none:none:none:none:none:none"')


def _forward_seconds(page, by_gpu: bool = False) -> dict[tuple[str, str], float]:
    """(GPU name or "", module) -> seconds of the launches with that module among their pushed
    ranges."""
    with page.open(newline="") as f:
        header, units, *rows = csv.reader(f)
    pushed = next(i for i, h in enumerate(header) if "Push/Pop_Range" in h)
    time, gpu = (
        header.index("gpu__time_duration.sum"),
        header.index("device__attribute_display_name"),
    )
    out: dict[tuple[str, str], float] = defaultdict(float)
    for row in rows:
        for name in set(_PUSHED.findall(row[pushed])):
            out[(row[gpu] if by_gpu else "", name)] += (
                float(row[time].replace(",", "")) * SECONDS[units[time]]
            )
    return out


def _tree(page):
    done = run_cli("report", page, "--by", "module", "--json")
    assert done.returncode == 0, done.stderr
    (root,) = json.loads(done.stdout)["rows"]
    return root


def _walk(node):
    kids = node["children"]
    if kids:  # every roll-up is its own launches plus its children's
        assert node["duration_s"] == pytest.approx(
            node["own_duration_s"] + sum(k["duration_s"] for k in kids)
        )
        assert node["count"] >= sum(k["count"] for k in kids)
    yield node
    for kid in kids:
        yield from _walk(kid)


def test_a_range_name_holding_a_slash_and_a_colon_is_one_node(tmp_path):
    page = renamed_page(tmp_path)
    nodes = list(_walk(_tree(page)))
    named = [n for n in nodes if n["name"] == RENAMED]
    assert len(named) == 1
    (node,) = named
    assert node["path_names"] == ["measure", "forward", RENAMED] and node["depth"] == 3
    assert node["path"] == "measure/forward/" + RENAMED  # the joined path, as before path_names
    assert not {"attn", "qkv:proj", "qkv", "proj"} & {n["name"] for n in nodes}
    expected = _forward_seconds(page)[("", RENAMED)]
    assert expected > 0 and node["forward_duration_s"] == pytest.approx(expected, rel=1e-9)
    assert node["backward_duration_s"] > 0  # its `backward/attn/qkv:proj` range found the module


def test_export_writes_the_names_of_a_nodes_path_as_a_list(tmp_path):
    out = tmp_path / "tree.csv"
    done = run_cli("export", renamed_page(tmp_path), "--by", "module", "-o", out)
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in csv.DictReader(out.open(newline=""))}
    assert json.loads(rows[RENAMED]["path_names"]) == ["measure", "forward", RENAMED]


def test_two_gpus_are_the_level_under_the_root_each_with_its_own_modules(tmp_path):
    page = two_gpu_page(tmp_path)
    root = _tree(page)
    assert len(list(_walk(root))) > 10  # every roll-up checked
    with page.open(newline="") as f:
        header, units, *rows = csv.reader(f)
    gpu, time = (
        header.index("device__attribute_display_name"),
        header.index("gpu__time_duration.sum"),
    )
    per_gpu: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for row in rows:
        per_gpu[row[gpu]][0] += 1
        per_gpu[row[gpu]][1] += float(row[time].replace(",", "")) * SECONDS[units[time]]
    assert len(per_gpu) == 2
    tops = {next(g for g in per_gpu if n["name"].endswith(": " + g)): n for n in root["children"]}
    assert len(root["children"]) == 2 and set(tops) == set(per_gpu)
    for name, (count, seconds) in per_gpu.items():
        assert tops[name]["count"] == count and tops[name]["duration_s"] == pytest.approx(
            seconds, rel=1e-9
        )
    assert root["duration_s"] == pytest.approx(sum(t for _, t in per_gpu.values()), rel=1e-9)
    forward = _forward_seconds(page, by_gpu=True)
    for name, top in tops.items():
        under = {n["name"]: n for n in _walk(top)}
        assert all(n["path_names"][0] == top["name"] for n in under.values())
        # launches alternate GPUs: a one-launch module is on one
        assert sum(m in under for m in MODULES) >= 4
        # a module none of a GPU's launches ran forward in: absent there, or backward only
        for module in MODULES:
            got = under[module]["forward_duration_s"] if module in under else 0.0
            assert got == pytest.approx(forward.get((name, module), 0.0), rel=1e-9, abs=1e-15), (
                name,
                module,
            )


def test_one_gpu_has_no_gpu_level(tmp_path):
    page = tmp_path / "one.csv"
    page.write_text(source_text(), newline="")
    assert [n["name"] for n in _tree(page)["children"]] == ["measure"]


def test_a_gpu_nodes_launches_are_that_gpus(tmp_path):
    """`r` on a node draws `Report.under_module(path)`: on a GPU node, that GPU's launches, as the
    page counts."""
    page = two_gpu_page(tmp_path)
    report = read_report(page)
    tree = report.module_tree()
    expected = time_per_gpu(page)
    for _, node in tree[tree["depth"] == 1].iterrows():
        launches = report.under_module(node["path"]).kernels
        (gpu,) = set(launches["gpu"])
        assert (
            node["name"].endswith(": " + gpu) and len(launches) == expected[gpu][0] == node["count"]
        )


@pytest.mark.parametrize("make", [renamed_page, two_gpu_page], ids=["renamed", "two-gpus"])
def test_check_by_module_matches_the_nodes_and_writes_their_names_as_a_list(tmp_path, make):
    page = make(tmp_path)
    done = run_cli("check", page, "--baseline", page, "--by", "module", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert all(r["kernel"] == ("/".join(r["path_names"]) or "(all launches)") for r in rows)
    names = {tuple(r["path_names"]) for r in rows}
    tree_names = {tuple(n["path_names"]) for n in _walk(_tree(page))}
    assert names <= tree_names and len(names) > 10
    if make is renamed_page:
        assert ("measure", "forward", RENAMED) in names
    else:
        assert len({n[0] for n in names if n}) == 2  # a GPU level
