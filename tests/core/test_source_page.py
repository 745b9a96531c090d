"""Issue 42.4: one launch's source page (SASS lines, instructions executed, warp samples), read
against what NVIDIA's own CLI prints for the same launch (`ncu --import FILE --page source --csv`),
and shown by `report --source` and the Kernel screen's `v`."""

from __future__ import annotations

import json
import re

import pytest
from flopscope.core.readers.ncu_rep_source import read_source

from ..conftest import FIXTURES, fixture_path
from ..helpers.accounting import report_actions, samples_by_address
from ..helpers.cli import run_cli
from ..helpers.ncu_source import cell, count, first_launch_page

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep")) if FIXTURES.is_dir() else []
CUB = "h100pcie_ee384_cub_agents_full.ncu-rep"


@pytest.mark.parametrize("name", FULL)
def test_the_first_launchs_sass_lines_are_what_ncu_prints(name, real_ncu):
    path = fixture_path(name)
    page = read_source(path, 0)
    if not page.lines:
        pytest.skip(f"{name}: its first launch has no source counters")
    printed = first_launch_page(real_ncu, path)
    assert {line.address for line in page.lines} <= set(printed)
    texts = 0
    for line in page.lines:
        row = printed[line.address]
        # ncu names the columns "Samples", or "Cycles" for older GPUs (Volta)
        assert line.samples == count(cell(row, "All")), hex(line.address)
        assert line.not_issued == count(cell(row, "Not-issued")), hex(line.address)
        assert line.executed == count(row["Instructions Executed"]), hex(line.address)
        # ncu_report's text, where it has one, is ncu's (commas and spaces aside)
        if line.sass != "???":
            assert re.sub(r"[\s,]", "", line.sass) == re.sub(r"[\s,]", "", row["Source"]), hex(
                line.address
            )
            texts += 1
    # ncu_report disassembles all of a launch or none of it (the V100 report: none, where ncu's CLI
    # can)
    assert texts == 0 or texts >= len(page.lines) * 0.9


def test_report_source_prints_the_hottest_lines_by_ncus_samples():
    path = fixture_path(CUB)
    samples = samples_by_address(report_actions(path)[3])
    hottest = sorted(samples, key=lambda a: (-samples[a], a))[:5]
    out = run_cli("report", path, "--source", "3", "--top", "5", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [line["address"] for line in doc["lines"]] == hottest
    assert doc["samples"] == sum(samples.values())
    text = run_cli("report", path, "--source", "fill_vector", "--top", "3", columns=200)
    assert text.returncode == 0 and "Launch ID 3: fill_vector" in text.stdout
    rows = [line for line in text.stdout.splitlines() if line.strip().startswith("0x")]
    assert [int(line.split()[0], 16) for line in rows] == hottest[:3]


def test_a_launch_without_source_counters_says_what_collects_them():
    from ..helpers.real_files import DEMO

    out = run_cli("report", DEMO, "--source", "0")
    assert out.returncode == 0, out.stderr
    assert "--section SourceCounters" in out.stdout and "-lineinfo" in out.stdout


def test_a_csv_has_no_source_page_one_line_exit_2():
    out = run_cli("report", fixture_path("a100_gemm_printfp_details.csv"), "--source", "0")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "only an .ncu-rep keeps them" in out.stderr and "Traceback" not in out.stderr


def test_a_name_that_matches_nothing_is_one_line_exit_2():
    out = run_cli("report", fixture_path(CUB), "--source", "no_such_kernel")
    assert out.returncode == 2 and "matches 'no_such_kernel'" in out.stderr


def test_a_page_without_sass_text_says_so_and_its_json_has_none():
    """The V100 report: NVIDIA's ncu_report gives `???` for each address (ncu's CLI prints the
    text), so `report --source` says once that the text is not there and why, and --json's `sass`
    is null, never `???`."""
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    text = run_cli("report", path, "--source", "0", "--top", "3", columns=200)
    assert text.returncode == 0, text.stderr
    assert "No SASS text: the installed ncu_report" in text.stdout and "???" not in text.stdout
    doc = json.loads(run_cli("report", path, "--source", "0", "--json").stdout)
    assert doc["lines"] and all(line["sass"] is None for line in doc["lines"])
    # a report it disassembles keeps its text
    cub = json.loads(run_cli("report", fixture_path(CUB), "--source", "3", "--json").stdout)
    assert all(line["sass"] for line in cub["lines"])
