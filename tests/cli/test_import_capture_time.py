"""Issue 19.10: an imported run keeps the time it was captured, not the moment of `flopscope
import`.

The expected times are what ncu itself prints for these files (`ncu --import FILE --page session`,
row `Created`, run with TZ=UTC), not what flopscope reads."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil

from flopscope.core.store.run_store import default_path
from flopscope.tui.app.launch import runs_app

from ..conftest import fixture_path
from ..helpers.app import screen_lines
from ..helpers.cli import run_cli
from ..helpers.h100_replay import RUN as H100_RUN

UTC = dt.UTC
T4_CREATED = dt.datetime(2025, 11, 17, 11, 43, 22, tzinfo=UTC)  # t4_mlp_matadd_full.ncu-rep
# the H100 capture's linear_bs8 run
H100_CREATED = dt.datetime(2026, 11, 24, 12, 26, 56, tzinfo=UTC)


def created(home) -> list[tuple[str, float]]:
    listed = json.loads(run_cli("runs", "--json", home=home).stdout)
    return [(r["name"], r["created"]) for r in listed]


async def test_an_imported_report_is_listed_at_its_capture_time(tmp_path, monkeypatch):
    folder = tmp_path / "t4"
    folder.mkdir()
    (folder / "report.ncu-rep.gz").write_bytes(
        gzip.compress(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes())
    )
    home = tmp_path / "home"
    done = run_cli("import", folder, home=home)
    assert done.returncode == 0, done.stderr
    assert created(home) == [("t4", T4_CREATED.timestamp())]
    monkeypatch.setenv("FLOPSCOPE_HOME", str(home))
    app = runs_app(default_path())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # the Runs screen shows local time
        shown = T4_CREATED.astimezone().strftime("%Y-%m-%d %H:%M")
        assert any("t4" in line and shown in line for line in screen_lines(app))


def test_an_imported_run_folder_keeps_ncus_capture_time(tmp_path):
    """The folder's run.json says when `flopscope profile` started (seconds before ncu's session
    began): the report's own time wins, and neither is the import's."""
    folder = shutil.copytree(H100_RUN, tmp_path / "linear_bs8")
    started = json.loads((folder / "run.json").read_text())["started"]
    assert 0 < H100_CREATED.timestamp() - started < 60
    home = tmp_path / "home"
    done = run_cli("import", folder, home=home)
    assert done.returncode == 0, done.stderr
    assert created(home) == [("linear_bs8", H100_CREATED.timestamp())]
