"""Long reads (issue 18.3, 18.6): progress on a terminal's stderr and on the app's loading screen,
quiet elsewhere, and Ctrl-C stops a long read cleanly. The report is generated from the project's
own H100 capture by repeating its result blocks (benchmarks/make_big_report.py), big enough that
reading it takes over a second."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.presentation.read_progress import ReadProgress, after_seconds, progress_line

from ..conftest import settle
from ..helpers.app import statuses_until_table
from ..helpers.terminal import in_terminal, stopped_in_one_line

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (
    ROOT / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "train_transformer_bs8.ncu-rep.xz"
)
# ~50 KB per launch: 2,000 launches are ~100 MB, written in about a second and read in one to two
# (the 10k of issue 18.6 take 15 s to write and read on the 2-core machine: benchmarks/ has them).
LAUNCHES = 2000

sys.path.insert(0, str(ROOT / "benchmarks"))
from make_big_report import _result_blocks, plain_copy, repeat_launches  # noqa: E402


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, int]:
    """(report, its number of launches), the number counted from the block headers of the copy
    made."""
    from flopscope.core.readers.ncu_rep_stream import message_classes

    folder = tmp_path_factory.mktemp("big")
    source = plain_copy(SOURCE, folder)
    _, _, per_copy = _result_blocks(source.read_bytes(), message_classes())
    out = repeat_launches(source, folder / "big.ncu-rep", launches=LAUNCHES)
    return out, per_copy * -(-LAUNCHES // per_copy)


def test_progress_line_says_launches_rate_and_time_left():
    assert progress_line(250, 1000, 0.5) == "250 / 1,000 launches  500/s  ETA 2 s"
    assert progress_line(1000, 1000, 2.0) == "1,000 / 1,000 launches  500/s"
    assert progress_line(1, 1000, 1.0) == "1 / 1,000 launches  1/s  ETA 16 min 39 s"
    assert progress_line(0, 0, 0.0) == "0 launches"


def test_the_wait_before_progress_is_half_a_second_unless_set(monkeypatch):
    monkeypatch.delenv("FLOPSCOPE_PROGRESS_AFTER", raising=False)
    assert after_seconds() == 0.5
    for value, expected in (("0", 0.0), ("2.5", 2.5), ("-1", 0.0), ("soon", 0.5)):
        monkeypatch.setenv("FLOPSCOPE_PROGRESS_AFTER", value)
        assert after_seconds() == expected


def test_progress_is_drawn_late_and_throttled():
    now = [0.0]
    drawn: list[str] = []
    progress = ReadProgress(drawn.append, every_s=0.125, after_s=0.5, clock=lambda: now[0])
    for done in range(1, 65):  # one launch every 1/64 s (exact in binary): 1 s in all
        now[0] = done / 64
        progress(done, 64)
    # first at 0.5 s (launch 32), then every 1/8 s
    assert [line.split(" /")[0] for line in drawn] == ["32", "40", "48", "56", "64"]
    assert progress.drawn


def test_a_long_read_shows_progress_on_a_terminal_then_the_table(big):
    path, launches = big
    code, out = in_terminal(["report", "--no-cache", "--by", "launch", "--top", "3", str(path)])
    assert code == 0, out
    lines = [part for part in out.split("\r") if "flopscope: reading" in part]
    assert lines, out[-2000:]
    assert all(f"/ {launches:,} launches" in line for line in lines)
    assert any("ETA" in line for line in lines) and all("/s" in line for line in lines)
    table = out.rsplit("\r\x1b[K", 1)[1]  # the progress line cleared, then the table
    assert "flopscope: reading" not in table and "3 row(s)" in table


def test_no_progress_when_stderr_is_not_a_terminal(big):
    path, _ = big
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flopscope.tui.cli",
            "report",
            "--no-cache",
            "--top",
            "1",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FLOPSCOPE_PROGRESS_AFTER": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert "launches" not in done.stderr and "\r" not in done.stderr and "\x1b" not in done.stderr


def test_no_progress_under_json_on_a_terminal(big):
    path, _ = big
    code, out = in_terminal(["report", "--no-cache", "--json", str(path)])
    assert code == 0
    assert "flopscope: reading" not in out


def test_ctrl_c_stops_a_long_read_in_one_line(big):
    path, _ = big
    code, out = in_terminal(
        ["report", "--no-cache", str(path)], interrupt_when=b"flopscope: reading"
    )
    stopped_in_one_line(code, out)


async def test_the_app_shows_progress_then_the_table(big, monkeypatch):
    path, launches = big
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "1")  # read it, not an earlier test's cached table
    monkeypatch.setenv("FLOPSCOPE_PROGRESS_AFTER", "0")
    app = kernels_app(path, by="launch")
    async with app.run_test(size=(120, 30)) as pilot:
        seen = await statuses_until_table(app, pilot, "launches")
        status = app.kernels.query_one("#status")
        assert any("reading the report: " in s and f"/ {launches:,} launches" in s for s in seen), (
            seen
        )
        assert len(app.kernels.model) == launches == len(app.report.kernels)
        assert "launches" not in str(status.render())  # the status line is the table's now
        # The other groupings are made in the background, `g`'s next one first, before anyone
        # presses it.
        await settle(pilot, lambda: {"nvtx", "name"} <= set(app.group_seconds), tries=3000)
        assert list(app.group_seconds) == ["launch", "nvtx", "name"]
