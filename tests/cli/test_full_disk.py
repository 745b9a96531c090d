"""A full disk while profiling or storing: one line naming the file, the problem and the fix, exit
2; no half-written report left to be taken for a whole one later, and the report ncu wrote kept
where the line says.

Two real ways to fill a disk: a 1 MiB tmpfs (needs root to mount; skipped otherwise) gives ENOSPC,
and a file size limit (RLIMIT_FSIZE, any user) gives EFBIG. ncu is the stand-in replaying a real
report (tests/ncu_standin/)."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.store.run_store import Store

from ..conftest import fixture_path
from ..helpers.cli import CLI
from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import STANDIN, make_ncu, one_error_line, remote

BIG = "v100_ncar_miniweather_fp64_full.ncu-rep"  # 1.5 MB: more than the small disk holds
SMALL = "t4_mlp_matadd_full.ncu-rep"


@pytest.fixture
def small_disk(tmp_path):
    """A real 1 MiB file system (tmpfs) as FLOPSCOPE_HOME, holding a store with one run `before`."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
    ).returncode:
        pytest.skip(
            "cannot mount a tmpfs here (needs root): the ENOSPC cases are not exercised; the file"
            " size limit cases still are"
        )
    try:
        with Store(disk / "flopscope.db") as store:
            store.save(read_report(fixture_path(SMALL)), "before")
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> None:
    """Write to `disk` until it refuses: the next write of anything fails with ENOSPC."""
    with (disk / "filler").open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass


def kept_report(line: str) -> Path:
    """The report file the error line says was kept."""
    return Path(re.search(r"the report is kept in (\S+):", line).group(1))


def listed(home: Path) -> list[str]:
    out = flopscope("runs", "--json", home=home)
    assert out.returncode == 0, out.stderr
    return [r["name"] for r in json.loads(out.stdout)]


def test_a_report_too_big_for_the_disk_is_one_line_and_kept_where_ncu_wrote_it(
    tmp_path, small_disk
):
    """Before: OSError traceback from the copy, and a cut-short report.ncu-rep left in the run
    folder."""
    work = tmp_path / "work"  # ncu's work folder: on another disk
    work.mkdir()
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path, BIG),
        "--no-tui",
        "--name",
        "big",
        "--",
        "true",
        home=small_disk,
        env={"TMPDIR": str(work)},
    )
    line = one_error_line(out)
    run = small_disk / "runs" / "big"
    assert line.startswith(
        f"flopscope: {run / 'report.ncu-rep'}: cannot copy the report here: no space left on "
        "device; free space on it, or set FLOPSCOPE_HOME to a folder on another disk; the report "
        "is kept in "
    ), line
    kept = kept_report(line)
    assert kept.is_relative_to(work) and kept.read_bytes() == fixture_path(BIG).read_bytes()
    assert f"`flopscope open {kept}`" in line
    assert not run.exists()  # no run folder, so no partial report, left to import or open
    assert listed(small_disk) == ["before"]


def test_a_full_disk_before_ncu_runs_is_one_line_naming_the_run_record(tmp_path, small_disk):
    """Before: OSError traceback from profiler._write_meta. (The store is held open meanwhile, as by
    another flopscope: its -shm file exists, so it opens on the full disk and the run's record is
    what fails.)"""
    held = sqlite3.connect(small_disk / "flopscope.db")
    held.execute("SELECT count(*) FROM runs").fetchone()
    fill(small_disk)
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--name",
        "full",
        "--",
        "true",
        home=small_disk,
        env={"TMPDIR": str(tmp_path)},
    )
    held.close()
    line = one_error_line(out)
    run = small_disk / "runs" / "full"
    assert (
        line
        == f"flopscope: {run / 'run.json'}: cannot write the run's record: no space left on device;"
        " free space on it, or set FLOPSCOPE_HOME to a folder on another disk"
    )
    assert not run.exists()
    (small_disk / "filler").unlink()
    assert listed(small_disk) == ["before"]


def test_a_store_opened_on_a_full_disk_says_the_disk_is_full(tmp_path, small_disk):
    """Before: "disk I/O error; check the disk holding it" (SQLite could not make the store's -shm
    file)."""
    fill(small_disk)
    line = one_error_line(flopscope("runs", "--json", home=small_disk))
    assert (
        line
        == f"flopscope: {small_disk / 'flopscope.db'}: cannot open the run store: the disk is full"
        " (disk I/O error); free space on it, or set FLOPSCOPE_HOME to a folder on another disk"
    )
    (small_disk / "filler").unlink()
    assert listed(small_disk) == ["before"]


def test_storing_on_a_full_disk_is_one_line_and_keeps_the_stored_runs(tmp_path, small_disk):
    folder = tmp_path / "runs" / "late"
    folder.mkdir(parents=True)
    shutil.copyfile(fixture_path(SMALL), folder / "report.ncu-rep")
    # as by another flopscope: the store opens, the insert fails
    held = sqlite3.connect(small_disk / "flopscope.db")
    held.execute("SELECT count(*) FROM runs").fetchone()
    fill(small_disk)
    line = one_error_line(flopscope("import", folder, home=small_disk))
    held.close()
    assert line.startswith(
        f"flopscope: {small_disk / 'flopscope.db'}: cannot store run late: the disk is full ("
    )
    assert "free space on it" in line and "move it aside" not in line
    (small_disk / "filler").unlink()
    assert listed(small_disk) == ["before"]
    # room again: nothing was lost
    assert flopscope("import", folder, home=small_disk).returncode == 0
    assert sorted(listed(small_disk)) == ["before", "late"]


# -- a file size limit: EFBIG, no root needed
# ----------------------------------------------------------------------
def unlimited_ncu(tmp_path: Path) -> Path:
    """The stand-in ncu, free of the limit flopscope runs under: the report it writes is whole."""
    script = tmp_path / "ncu-unlimited"
    script.write_text(
        f"#!/bin/sh\nulimit -f unlimited\nexec {sys.executable} {STANDIN} --standin-report"
        f' {fixture_path(BIG)} "$@"\n'
    )
    script.chmod(0o755)
    return script


def limited(limit: int):
    """For preexec_fn: files this process writes stop at `limit` bytes (Python ignores SIGXFSZ:
    EFBIG instead)."""
    return lambda: resource.setrlimit(
        resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1])
    )


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_a_file_size_limit_stops_the_copy_with_one_line_and_nothing_half_written(
    tmp_path, request, where
):
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    Store(home / "flopscope.db").close()  # made before the limit: SQLite's own files stay small
    out = subprocess.run(
        [
            *CLI,
            "profile",
            *map(str, host),
            "--ncu",
            str(unlimited_ncu(tmp_path)),
            "--no-tui",
            "--name",
            "big",
            "--",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=limited(300_000),
        env={**os.environ, "FLOPSCOPE_HOME": str(home), **({} if host else {"TMPDIR": str(work)})},
    )
    line = one_error_line(out)
    run = home / "runs" / "big"
    assert line.startswith(
        f"flopscope: {run / 'report.ncu-rep'}: cannot copy the report here: file too large for "
        "this file system or for the process's file size limit; raise the limit (`ulimit -f`)"
    )
    # on the loopback host: its work folder, as the scp the line suggests names it
    kept = (
        kept_report(line)
        if where == "local"
        else Path(re.search(r"`scp gpubox:(\S+) \.`", line).group(1))
    )
    assert kept.read_bytes() == fixture_path(BIG).read_bytes()
    if where == "local":  # stored as the line says, once the limit is gone
        assert f"`flopscope import {kept.parent} --name big` stores it once there is room" in line
        imported = flopscope("import", kept.parent, "--name", "big", home=home)
        assert imported.returncode == 0, imported.stderr
        assert [r["name"] for r in json.loads(flopscope("runs", "--json", home=home).stdout)] == [
            "big"
        ]
    shutil.rmtree(kept.parent)
    assert not run.exists()


def test_a_file_size_limit_on_ncus_output_stops_ncu_with_one_line(tmp_path):
    """ncu.log is the first file to grow past the limit: ncu is stopped, not left to run
    unwatched."""
    home = tmp_path / "home"
    Store(home / "flopscope.db").close()
    # its -shm exists: SQLite's files do not grow under the limit
    held = sqlite3.connect(home / "flopscope.db")
    held.execute("SELECT count(*) FROM runs").fetchone()
    chatty = [
        sys.executable,
        "-c",
        "import time\nfor _ in range(100): print('x' * 100, flush=True)\ntime.sleep(60)",
    ]
    out = subprocess.run(
        [
            *CLI,
            "profile",
            "--ncu",
            str(unlimited_ncu(tmp_path)),
            "--no-tui",
            "--name",
            "chatty",
            "--",
            *chatty,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=limited(4096),
        env={**os.environ, "FLOPSCOPE_HOME": str(home), "TMPDIR": str(tmp_path)},
    )
    held.close()
    line = one_error_line(out)
    assert (
        line
        == f"flopscope: {home / 'runs' / 'chatty' / 'ncu.log'}: cannot write ncu's output (ncu was"
        " stopped): file too large for this file system or for the process's file size limit;"
        " raise the limit (`ulimit -f`), or set FLOPSCOPE_HOME to a folder on another disk"
    )
    assert not (home / "runs" / "chatty").exists()
