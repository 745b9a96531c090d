"""The output cache (tui/cli/output_cache.py): a repeated `report` prints exactly what a fresh read
prints, byte for byte, stdout and stderr, without importing pandas; anything the first run read
changed, added beside, or a terminal of another size, and the command runs again; commands with
effects beyond printing, failures and damaged entries are never answered from it.

Each command runs in a real interpreter (`python -X importtime -m flopscope.tui.cli`): whether
pandas was imported is read from the interpreter's own import log, not from flopscope."""

from __future__ import annotations

import json
import lzma
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import FIXTURES
from ..helpers.real_files import one_of_each_kind
from ..helpers.steps import TRAIN_STEP as H100_STEP
from ..helpers.steps import two_step_page, write_timing
from ..helpers.terminal import in_terminal

DEMO = next((Path(__file__).parents[2] / "tui" / "examples").glob("*.ncu-rep*"))


def _reports() -> list[Path]:
    """The demo (compressed), then a .ncu-rep, a raw and a details CSV of the shared fixtures; every
    one with FLOPSCOPE_EVERY_FILE=1."""
    found = sorted(FIXTURES.glob("*.ncu-rep")) + sorted(FIXTURES.glob("*.csv"))
    return one_of_each_kind([DEMO, *found])


class Run:
    def __init__(self, done: subprocess.CompletedProcess) -> None:
        lines = done.stderr.splitlines(keepends=True)
        self.imports = [line for line in lines if line.startswith("import time:")]
        self.stderr = "".join(line for line in lines if not line.startswith("import time:"))
        self.stdout, self.code = done.stdout, done.returncode

    @property
    def replayed(self) -> bool:
        """Whether the interpreter answered without importing pandas (a report's read needs it)."""
        return bool(self.imports) and not any(" pandas" in line for line in self.imports)

    def same(self, other: Run) -> bool:
        return (self.stdout, self.stderr, self.code) == (other.stdout, other.stderr, other.code)


def flopscope(*args, home: Path, cwd: Path | None = None, **env: str) -> Run:
    full = {**os.environ, "FLOPSCOPE_HOME": str(home), "FLOPSCOPE_NO_CACHE": "0", "COLUMNS": "200"}
    full.update(env)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "flopscope.tui.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    return Run(done)


def _entries(home: Path) -> list[Path]:
    return sorted((home / "cache").glob("*.out.json"))


@pytest.mark.parametrize("report", _reports(), ids=lambda p: p.name)
def test_a_repeat_prints_what_the_first_run_printed_without_reading_the_report(report, tmp_path):
    if not report.exists():
        pytest.skip(f"{report} absent (../shared/fixtures/ncu)")
    # --json of the reports issue 44 names (.ncu-rep files); the CSV pages' tables
    for args in ([], ["--json"]) if ".ncu-rep" in report.name else ([],):
        first = flopscope("report", report, *args, home=tmp_path)
        again = flopscope("report", report, *args, home=tmp_path)
        assert first.code == 0, first.stderr
        assert not first.replayed and again.replayed, args
        assert again.same(first), args


@pytest.mark.parametrize(
    "args",
    [
        ["--json"],
        ["--by", "launch", "--sort", "flop", "--top", "3"],
        ["--by", "module", "--depth", "2"],
        ["--where", "time > 1us", "--columns", "kernel,time,flop"],
    ],
    ids=["json", "launches", "module-tree", "where-columns"],
)
def test_a_repeat_equals_a_fresh_read_with_the_cache_off(args, tmp_path):
    fresh = flopscope("report", DEMO, *args, home=tmp_path, FLOPSCOPE_NO_CACHE="1")
    first = flopscope("report", DEMO, *args, home=tmp_path)
    again = flopscope("report", DEMO, *args, home=tmp_path)
    assert fresh.code == 0, fresh.stderr
    assert again.replayed and not fresh.replayed
    assert first.same(fresh) and again.same(fresh)


def test_open_into_a_pipe_and_demo_without_the_app_are_kept_too(tmp_path):
    for args in (["open", DEMO], [DEMO], ["demo", "--no-tui"]):
        first = flopscope(*args, home=tmp_path)
        again = flopscope(*args, home=tmp_path)
        assert first.code == 0 and again.replayed and again.same(first), args


def _csv_copy(tmp_path: Path) -> Path:
    source = FIXTURES / "rtx5090_dsocr_cutlass_gemm_details.csv"
    if not source.exists():
        pytest.skip(f"{source} absent (../shared/fixtures/ncu)")
    folder = tmp_path / "reports"
    folder.mkdir()
    return Path(shutil.copy(source, folder / "gemm.csv"))


def test_a_report_changed_in_place_is_read_again(tmp_path):
    report = _csv_copy(tmp_path)
    flopscope("report", report, "--json", home=tmp_path)
    text = report.read_text(encoding="utf-8")
    name = "cutlass"
    assert name in text
    report.write_text(text.replace(name, "CHANGED"), encoding="utf-8")
    again = flopscope("report", report, "--json", home=tmp_path)
    fresh = flopscope("report", report, "--json", home=tmp_path, FLOPSCOPE_NO_CACHE="1")
    assert not again.replayed and "CHANGED" in again.stdout and again.same(fresh)


def test_a_timing_file_added_beside_the_report_shows_its_steps(tmp_path):
    if not H100_STEP.exists():
        pytest.skip(f"{H100_STEP} absent")
    folder = tmp_path / "run"
    folder.mkdir()
    page = two_step_page(folder / "raw.csv", steps=2)
    before = flopscope("report", page, "--by", "module", home=tmp_path)
    write_timing(folder, {1: 0.0412, 2: 0.00311})
    after = flopscope("report", page, "--by", "module", home=tmp_path)
    fresh = flopscope("report", page, "--by", "module", home=tmp_path, FLOPSCOPE_NO_CACHE="1")
    assert before.code == 0 and not after.replayed
    assert after.same(fresh) and not after.same(before)
    assert "timing.json" in after.stdout and "timing.json" not in before.stdout


def test_another_terminal_width_is_laid_out_afresh(tmp_path):
    wide = flopscope("report", DEMO, home=tmp_path, COLUMNS="200")
    narrow = flopscope("report", DEMO, home=tmp_path, COLUMNS="90")
    fresh = flopscope("report", DEMO, home=tmp_path, COLUMNS="90", FLOPSCOPE_NO_CACHE="1")
    assert not narrow.replayed and narrow.same(fresh) and not narrow.same(wide)
    assert len(_entries(tmp_path)) == 2


def _in_terminal(args: list[str], home: Path, columns: int) -> str:
    """What a terminal of `columns` x 30 receives (colours included)."""
    env = {"FLOPSCOPE_HOME": str(home), "FLOPSCOPE_NO_CACHE": "0"}
    code, out = in_terminal(args, size=(columns, 30), env=env)
    assert code == 0, out
    # less a read's progress line: drawn and erased on stderr where a read takes over a second (a
    # busy machine's first run), never part of what the command prints
    return re.sub(r"\rflopscope: reading [^\r\n]*?\x1b\[K|\r\x1b\[K", "", out)


def test_a_terminal_gets_the_same_colours_and_layout_again(tmp_path):
    args = ["report", str(DEMO), "--top", "5"]
    first = _in_terminal(args, tmp_path, 120)
    assert "\x1b[" in first  # a terminal gets colours
    assert _in_terminal(args, tmp_path, 120) == first
    assert len(_entries(tmp_path)) == 1
    narrow = _in_terminal(args, tmp_path, 100)
    assert narrow != first and len(_entries(tmp_path)) == 2


@pytest.mark.parametrize(
    "args",
    [["--no-cache"], ["-o", "{tmp}/picture.txt"], ["--sort", "no-such-column"]],
    ids=["no-cache", "picture", "failed"],
)
def test_commands_that_do_more_than_print_or_fail_are_not_kept(args, tmp_path):
    args = [a.format(tmp=tmp_path) for a in args]
    first = flopscope("report", DEMO, *args, home=tmp_path)
    again = flopscope("report", DEMO, *args, home=tmp_path)
    assert not again.replayed and again.same(first)
    assert _entries(tmp_path) == []


def test_a_stored_run_is_not_kept_it_lives_in_a_database(tmp_path):
    stored = flopscope("import", DEMO, "--name", "demo", home=tmp_path)
    assert stored.code == 0, stored.stderr
    first = flopscope("report", "demo", home=tmp_path)
    again = flopscope("report", "demo", home=tmp_path)
    assert first.code == 0 and not again.replayed and again.same(first)
    assert _entries(tmp_path) == []


@pytest.mark.parametrize("damage", ["truncated", "garbage", "another-entry"])
def test_a_damaged_entry_is_ignored(damage, tmp_path):
    first = flopscope("report", DEMO, home=tmp_path)
    (entry,) = _entries(tmp_path)
    if damage == "truncated":
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(4096))
    else:  # another command's entry copied over this one's name
        flopscope("report", DEMO, "--json", home=tmp_path)
        other = next(e for e in _entries(tmp_path) if e != entry)
        shutil.copy(other, entry)
    again = flopscope("report", DEMO, home=tmp_path)
    assert not again.replayed and again.same(first)
    assert flopscope("report", DEMO, home=tmp_path).replayed  # written again, whole


def test_a_replay_into_a_closed_pipe_ends_quietly(tmp_path):
    flopscope("report", DEMO, "--by", "launch", "--all", home=tmp_path)
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path), "FLOPSCOPE_NO_CACHE": "0"}
    env["COLUMNS"] = "200"
    done = Run(
        subprocess.run(
            f"{sys.executable} -X importtime -m flopscope.tui.cli report {DEMO} --by launch --all"
            " | head -1",
            shell=True,
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
    )
    assert done.replayed and done.code == 0 and done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr


def test_output_past_the_cap_or_written_by_native_code_is_not_kept(tmp_path, monkeypatch):
    from flopscope.tui.cli import output_cache

    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "0")
    monkeypatch.setattr(output_cache, "MAX_BYTES", 1000)

    def prints(size: int, native: bool = False):
        def run() -> int:
            print("x" * size)
            if native:  # what readers/ncu_rep.py raises before passing native stderr on
                sys.audit(output_cache.NATIVE_STDERR_EVENT)
            return 0

        return run

    for argv, run in ((["report", "a"], prints(2000)), (["report", "b"], prints(10, native=True))):
        assert output_cache.run_recorded(argv, True, run) == 0
    assert _entries(tmp_path) == []
    assert output_cache.run_recorded(["report", "c"], True, prints(10)) == 0
    assert len(_entries(tmp_path)) == 1


def test_entries_share_the_cache_folders_size_cap(tmp_path, monkeypatch):
    from flopscope.tui.cli import output_cache

    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "0")

    def prints() -> int:
        print("x" * 100)
        return 0

    output_cache.run_recorded(["report", "old"], True, prints)
    (old,) = _entries(tmp_path)
    os.utime(old, (0, 0))  # least recently used
    monkeypatch.setenv("FLOPSCOPE_CACHE_MAX_BYTES", str(old.stat().st_size * 3 // 2))
    output_cache.run_recorded(["report", "new"], True, prints)
    (kept,) = _entries(tmp_path)
    assert kept != old


def test_a_report_read_from_standard_input_or_a_pipe_is_never_answered_from_the_cache(tmp_path):
    """The cache cannot know what came through stdin or a FIFO: each such read is read afresh."""
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path), "FLOPSCOPE_NO_CACHE": "0"}
    env["COLUMNS"] = "200"
    kernels = []
    for report in (DEMO, FIXTURES / "t4_mlp_matadd_full.ncu-rep"):
        if not report.exists():
            pytest.skip(f"{report} absent (../shared/fixtures/ncu)")
        data = (
            lzma.decompress(report.read_bytes()) if report.suffix == ".xz" else report.read_bytes()
        )
        done = subprocess.run(
            [sys.executable, "-m", "flopscope.tui.cli", "report", "-", "--json"],
            input=data,
            capture_output=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        kernels.append({row["kernel"] for row in json.loads(done.stdout)["rows"]})
        fifo = tmp_path / "fifo"
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
        writer = subprocess.Popen(["cp", str(report), str(fifo)])
        piped = flopscope("report", fifo, "--json", home=tmp_path)
        writer.wait(timeout=60)
        assert piped.code == 0 and not piped.replayed, piped.stderr
    assert kernels[0] != kernels[1]
    assert _entries(tmp_path) == []
