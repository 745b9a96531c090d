"""A big CSV's read shows its progress on a terminal's stderr as bytes of the file (issue 18.3 for
CSVs), and nothing into a pipe or under --json; Ctrl-C stops it in one line. The app shows the same
on its status line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.presentation.read_progress import progress_line

from ..conftest import fixture_path
from ..helpers.app import statuses_until_table
from ..helpers.raw_csv import repeated_raw_page
from ..helpers.terminal import in_terminal, stopped_in_one_line

# The real 475-column raw page (16 B200 launches) repeated with fresh IDs: ~3 KB a launch, so 40,000
# launches are ~130 MB, read in one to three seconds on the 2-core machine: long enough to see and
# to interrupt.
LAUNCHES = 40_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bigcsv") / "big.csv"
    return repeated_raw_page(fixture_path("b200_torch_sdpa_auto_raw.csv"), out, LAUNCHES)


def test_progress_line_in_bytes_says_megabytes_rate_and_time_left():
    assert progress_line(50_000_000, 200_000_000, 2.0, "bytes") == "50 / 200 MB  25 MB/s  ETA 6 s"
    assert progress_line(200_000_000, 200_000_000, 4.0, "bytes") == "200 / 200 MB  50 MB/s"


def test_a_big_csv_shows_its_progress_in_bytes_then_the_table(big_csv):
    code, out = in_terminal(["report", "--no-cache", "--by", "launch", "--top", "3", str(big_csv)])
    assert code == 0, out[-2000:]
    lines = [part for part in out.split("\r") if "flopscope: reading" in part]
    assert lines, out[-2000:]
    total = big_csv.stat().st_size / 1e6
    shown = [re.search(r"reading ([\d,]+) / ([\d,]+) MB  [\d,]+ MB/s", line) for line in lines]
    assert all(shown), lines
    assert {m[2] for m in shown} == {f"{total:,.0f}"}
    done = [int(m[1].replace(",", "")) for m in shown]
    assert done == sorted(done) and done[-1] <= round(total)
    table = out.rsplit("\r\x1b[K", 1)[1]  # the progress line cleared, then the table
    assert "flopscope: reading" not in table and "3 row(s)" in table


def test_no_csv_progress_into_a_pipe(big_csv):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flopscope.tui.cli",
            "report",
            "--no-cache",
            "--top",
            "1",
            str(big_csv),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FLOPSCOPE_PROGRESS_AFTER": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert "MB" not in done.stderr and "\r" not in done.stderr and "\x1b" not in done.stderr


def test_no_csv_progress_under_json_on_a_terminal(big_csv):
    code, out = in_terminal(["report", "--no-cache", "--json", "--top", "1", str(big_csv)])
    assert code == 0
    assert "flopscope: reading" not in out


def test_ctrl_c_stops_a_big_csv_read_in_one_line(big_csv):
    code, out = in_terminal(
        ["report", "--no-cache", str(big_csv)], interrupt_when=b"flopscope: reading"
    )
    stopped_in_one_line(code, out)


async def test_the_app_shows_a_csvs_progress_then_the_table(big_csv, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_PROGRESS_AFTER", "0")
    app = kernels_app(big_csv, by="launch")
    async with app.run_test(size=(120, 30)) as pilot:
        seen = await statuses_until_table(app, pilot, " MB")
        assert any("reading the report: " in s and " MB/s" in s for s in seen), seen
        assert len(app.kernels.model) == LAUNCHES
