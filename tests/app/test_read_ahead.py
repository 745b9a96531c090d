"""`flopscope open FILE` starts reading the file before Textual is imported (read_ahead.py): the app
then shows what that read gives, its progress included, says a bad file's one line with exit code 2,
and a read still running when the app closes is stopped, not left behind."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.read_ahead import ReadAhead, ReadStopped

from ..conftest import fixture_path
from ..helpers.app import H100, exited, ready, statuses_until_table
from ..helpers.raw_csv import repeated_raw_page

LAUNCHES = 20_000  # of the real 475-column raw page, ~3 KB each: a read of a second or two


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ahead") / "big.csv"
    return repeated_raw_page(fixture_path("b200_torch_sdpa_auto_raw.csv"), out, LAUNCHES)


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "1")  # every read here is a read of the file


def ahead_of(path: Path) -> ReadAhead:
    return ReadAhead(lambda progress: read_report(path, progress=progress))


async def test_the_app_shows_the_read_ahead_report_and_its_progress(big_csv, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_PROGRESS_AFTER", "0")
    gate = threading.Event()

    # held at its first progress until the app listens: the progress is then replayed
    def read(progress):
        def held(*args):
            gate.wait(10)
            progress(*args)

        return read_report(big_csv, progress=held)

    ahead = ReadAhead(read)
    app = kernels_app(big_csv, by="launch", read_ahead=ahead)
    async with app.run_test(size=(120, 30)) as pilot:
        gate.set()
        seen = await statuses_until_table(app, pilot, " MB")
        assert any("reading the report: " in s and " MB/s" in s for s in seen), seen
        await ready(app, pilot)
        assert len(app.kernels.model) == LAUNCHES
        assert app.report is ahead.result()  # the read-ahead's report, not a second read


def test_a_late_listener_first_hears_where_the_read_has_got_to():
    reached, go_on = threading.Event(), threading.Event()

    def read(progress):
        progress(1_000, 4_000, "bytes")
        reached.set()
        go_on.wait(10)
        progress(4_000, 4_000, "bytes")
        return read_report(fixture_path(H100))

    ahead = ReadAhead(read)
    assert reached.wait(10)
    heard: list[tuple] = []
    ahead.listen(lambda *args: heard.append(args))
    # replayed at once: the app's status line is not left blank
    assert heard == [(1_000, 4_000, "bytes")]
    go_on.set()
    assert ahead.result().meta.launches > 0
    assert heard == [(1_000, 4_000, "bytes"), (4_000, 4_000, "bytes")]


def test_stop_ends_a_running_read_at_its_next_progress(big_csv):
    ahead = ahead_of(big_csv)
    start = time.perf_counter()
    ahead.stop()
    assert not ahead._thread.is_alive()
    with pytest.raises(ReadStopped):
        ahead.result()
    assert time.perf_counter() - start < 5


async def test_a_bad_file_read_ahead_exits_with_code_2_and_its_one_line(tmp_path, capfd):
    bad = tmp_path / "broken.ncu-rep"
    bad.write_bytes(b"NVR\x00" + b"\x07" * 64)
    ahead = ahead_of(bad)
    with pytest.raises(FlopscopeError):
        ahead.result()
    app = kernels_app(bad, read_ahead=ahead)
    async with app.run_test() as pilot:
        assert await exited(app, pilot, tries=100) == 2
    # spaces out: the console wraps the line at its width
    said = "".join(capfd.readouterr().err.split())
    assert "".join(f"flopscope: {bad}: the report is truncated".split()) in said
