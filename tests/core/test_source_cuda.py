"""Issue 42.4 (CUDA text): the CUDA line beside each SASS line of the source page, and the page by
CUDA line, read against what NVIDIA's CLI prints for the same report: `ncu --import FILE --page
source --csv --print-source cuda` (each embedded file's text by line number) and `--print-source
sass` (each address's samples and instructions, which the CUDA view sums per line). ncu 2024.1's
`cuda,sass` view would give the sums directly, but it did not finish on the CUB report in 15
minutes; and it counts an inlined instruction at every line of its inline chain, where ncu_report
resolves each address to one line, so only the per-address sums are compared."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from flopscope.core.readers.ncu_rep_source import read_source
from flopscope.core.readers.source_cuda import by_cuda_line, cuda_text, file_lines, hottest_cuda
from flopscope.tui.presentation.source_page import CUDA, cuda_cells, line_cells, page_columns

from ..conftest import fixture_path
from ..helpers.accounting import report_actions
from ..helpers.cli import run_cli
from ..helpers.ncu_source import cell, count, first_launch_page

# The fixtures whose reports embed their source files (ncu --import-source yes): CUDA, and OpenACC
# Fortran.
WITH_FILES = ["h100pcie_ee384_cub_agents_full.ncu-rep", "v100_ncar_miniweather_fp64_full.ncu-rep"]
CUB = WITH_FILES[0]
# ncu does not double the quotes inside a line: read it whole
LINE = re.compile(r'^"(\d+)","(.*)"$')


def ncu_files(real_ncu, path) -> dict[str, dict[int, str]]:
    """ncu's print of every file the report embeds: {file: {line number: text}}."""
    out = subprocess.run(
        [*real_ncu, "--import", str(path), "--page", "source", "--csv", "--print-source", "cuda"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    files: dict[str, dict[int, str]] = {}
    current: dict[int, str] = {}
    for row in out.stdout.splitlines():
        if row.startswith('"File Name",'):
            current = files.setdefault(row.split(",", 1)[1].strip('"'), {})
        elif match := LINE.match(row):
            current[int(match.group(1))] = match.group(2)
    return files


@pytest.mark.parametrize("name", WITH_FILES)
def test_each_sass_lines_cuda_text_is_the_line_ncu_prints(name, real_ncu):
    """ncu 2024.1 prints the file of each kernel's entry point (not every header the report embeds):
    every SASS line of every launch that falls in one of those is compared."""
    path = fixture_path(name)
    printed = ncu_files(real_ncu, path)
    assert printed, "ncu printed no file"
    compared = 0
    for launch in range(len(report_actions(path))):
        page = read_source(path, launch)
        lines = file_lines(page)
        for sass in page.lines:
            if sass.file not in printed:
                continue
            text = cuda_text(lines, sass.file, sass.line)
            assert text is not None and sass.line in printed[sass.file], (
                launch,
                sass.file,
                sass.line,
            )
            assert text.rstrip() == printed[sass.file][sass.line].rstrip(), (
                launch,
                sass.file,
                sass.line,
            )
            compared += 1
    assert compared >= 10


@pytest.mark.parametrize("name", WITH_FILES)
def test_by_cuda_line_sums_ncus_samples_and_instructions_per_address(name, real_ncu):
    """Each CUDA line's samples, not-issued samples and instructions executed are the sums of what
    ncu's SASS view prints for the addresses ncu_report resolves to that line."""
    path = fixture_path(name)
    printed = first_launch_page(real_ncu, path)
    page = read_source(path, 0)
    lines = by_cuda_line(page)
    assert lines
    for line in lines:
        addresses = [s.address for s in page.lines if (s.file, s.line) == (line.file, line.line)]
        rows = [printed[a] for a in addresses]
        assert line.samples == sum(count(cell(r, "All")) for r in rows), (line.file, line.line)
        assert line.not_issued == sum(count(cell(r, "Not-issued")) for r in rows), (
            line.file,
            line.line,
        )
        assert line.executed == sum(count(r["Instructions Executed"]) for r in rows), (
            line.file,
            line.line,
        )


def test_the_cub_reports_hottest_cuda_line_is_its_hottest_sass_lines_loop():
    page = read_source(fixture_path(CUB), 0)
    hottest = hottest_cuda(by_cuda_line(page))[0]
    assert hottest.file.endswith("parallel_for.h") and hottest.text.strip() == "f(tile_base + idx);"
    at_it = [s for s in page.lines if (s.file, s.line) == (hottest.file, hottest.line)]
    assert hottest.samples == sum(s.samples for s in at_it) and hottest.sass_lines == len(at_it)
    assert hottest.executed == sum(s.executed or 0 for s in at_it)
    # every sample has its line here
    assert sum(c.samples for c in by_cuda_line(page)) == page.samples


def test_a_report_without_files_gets_no_cuda_column():
    page = read_source(fixture_path("t4_mlp_matadd_full.ncu-rep"), 0)
    assert CUDA not in page_columns(page) and not by_cuda_line(page)


def test_cuda_text_reaches_the_terminal_inert():
    """A source line with an escape sequence (the report is untrusted) shows as text, in both
    views."""
    from dataclasses import replace

    page = read_source(fixture_path(CUB), 0)
    sass = page.hottest()[0]
    evil = "\x1b]0;owned\x07 rm -rf / \x1b[2J"
    text = page.files[sass.file].split("\n")
    text[sass.line - 1] = evil
    bad = replace(page, files={**page.files, sass.file: "\n".join(text)})
    cells = line_cells(sass, bad.samples, file_lines(bad))
    hot = next(c for c in by_cuda_line(bad) if (c.file, c.line) == (sass.file, sass.line))
    for shown in (cells[-1], cuda_cells(hot, bad.samples)[3]):
        assert "\x1b" not in shown and "\x07" not in shown and "\\x1b" in shown


def test_report_source_json_carries_the_cuda_text_and_the_lines():
    out = run_cli("report", fixture_path(CUB), "--source", "0", "--top", "3", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    page = read_source(fixture_path(CUB), 0)
    lines = file_lines(page)
    for record in doc["lines"]:
        assert record["cuda"] == cuda_text(lines, record["file"], record["line"])
    expected = hottest_cuda(by_cuda_line(page), 3)
    assert [(c["file"], c["line"], c["samples"]) for c in doc["cuda_lines"]] == [
        (c.file, c.line, c.samples) for c in expected
    ]
    assert doc["cuda_lines"][0]["cuda"].strip() == "f(tile_base + idx);"


def test_report_source_prints_the_hottest_cuda_lines():
    out = run_cli(
        "report", fixture_path(CUB), "--source", "0", "--top", "3", env={"COLUMNS": "200"}
    )
    assert out.returncode == 0, out.stderr
    assert "By CUDA line" in out.stdout and "f(tile_base + idx);" in out.stdout
