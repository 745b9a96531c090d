"""Issue 42.5: warp instructions executed per SASS opcode (ncu's InstructionStats,
`sass__inst_executed_per_opcode`), read on demand for the Instruction mix panel, against the real
ncu's own print of the same file (`--page raw --csv --print-metric-instances details`: `total (OP:
N; ...)`), every launch of every full-set report, parsed here with the csv module."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess

import pytest
from flopscope.core.readers.opcode_mix import read_opcodes
from flopscope.tui.presentation.opcode_mix import opcode_items

from ..conftest import FIXTURES, fixture_path
from ..helpers.cli import run_cli

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep")) if FIXTURES.is_dir() else []
METRIC = "sass__inst_executed_per_opcode"


def ncu_opcodes(real_ncu, path) -> list[tuple[int, dict[str, int]]]:
    """Per launch, in file order: (ncu's total, {opcode: count}) as the ncu CLI prints them."""
    page = subprocess.run(
        [*real_ncu, "--import", str(path), "--page", "raw", "--csv", "--metrics", METRIC,
         "--print-metric-instances", "details"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert page.returncode == 0, page.stderr
    out = []
    for row in list(csv.DictReader(io.StringIO(page.stdout)))[1:]:  # after the units row
        cell = row[METRIC].replace(",", "")
        total, _, inside = cell.partition(" (")
        pairs = [p.split(": ") for p in inside.rstrip(")").split("; ") if p]
        out.append((int(float(total or 0)), {op: int(n) for op, n in pairs}))
    return out


@pytest.mark.parametrize("name", FULL)
def test_every_launchs_opcodes_are_what_ncu_prints(name, real_ncu):
    path = fixture_path(name)
    printed = ncu_opcodes(real_ncu, path)
    compared = 0
    for launch, (total, opcodes) in enumerate(printed):
        counts = read_opcodes(path, [launch])
        assert counts == opcodes, launch
        assert sum(counts.values()) == total, launch
        compared += bool(counts)
    assert compared
    # a group's: the sum of its launches'
    every = read_opcodes(path, range(len(printed)))
    for opcode in every:
        assert every[opcode] == sum(o.get(opcode, 0) for _, o in printed), opcode


def test_the_panel_lines_rank_the_opcodes_with_their_shares(real_ncu):
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    total, opcodes = ncu_opcodes(real_ncu, path)[0]
    items = opcode_items(read_opcodes(path, [0]), top=3)
    ranked = sorted(opcodes.items(), key=lambda oc: (-oc[1], oc[0]))
    assert [label for label, _ in items] == [
        "Top opcodes",
        *(op for op, _ in ranked[:3]),
        f"{len(ranked) - 3} other opcodes",
    ]
    shares = [float(re.search(r"([\d.]+)%", value).group(1)) for _, value in items[1:]]
    expected = [n for _, n in ranked[:3]] + [sum(n for _, n in ranked[3:])]
    assert shares == pytest.approx([100 * n / total for n in expected], abs=0.05)
    assert opcode_items({}) == []


@pytest.mark.parametrize("name", FULL)
def test_report_by_launch_json_nests_each_launchs_opcodes(name, real_ncu):
    """`report --by launch --json`: `opcodes`, {launch ID: {opcode: count}}, beside the rows (one
    nested field, not a column per opcode), as the real ncu prints them."""
    path = fixture_path(name)
    printed = ncu_opcodes(real_ncu, path)
    out = run_cli("report", path, "--by", "launch", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    expected = {str(launch): o for launch, (_, o) in enumerate(printed) if o}
    assert doc["opcodes"] == expected
    assert not any(c.startswith(METRIC) for row in doc["rows"] for c in row)


def test_a_report_without_opcode_counts_has_no_opcodes_key():
    out = run_cli(
        "report", fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"), "--by", "launch",
        "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "opcodes" not in json.loads(out.stdout)
