"""The run store: real SQLite, atomic writes (a killed writer loses nothing stored), runs, diff."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store

from ..conftest import fixture_path
from ..helpers.cli import run_cli as cli
from ..helpers.store import one_line


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def test_a_store_is_closed_when_its_with_block_ends_even_by_an_error(tmp_path):
    with Store(tmp_path / "s.db") as store:
        assert store.runs().empty
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        store.db.execute("SELECT 1")
    with pytest.raises(FlopscopeError), Store(tmp_path / "s.db") as failing:
        failing.load("no-such-run")
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        failing.db.execute("SELECT 1")


def test_round_trip_keeps_every_number(store):
    report = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"))
    store.save(report, "mw", params={"batch_size": "8"}, host="gpubox")
    back = store.load("mw")
    for col in ("duration_s", "flop", "dram_bytes", "peak_flop_per_s", "pct_of_peak", "ai_dram"):
        assert back.kernels[col].tolist() == pytest.approx(
            report.kernels[col].tolist(), nan_ok=True
        )
    assert (
        back.kernels["kernel"].astype(str).tolist() == report.kernels["kernel"].astype(str).tolist()
    )
    assert back.summary().total_flop == pytest.approx(report.summary().total_flop)
    assert back.gpu.key == report.gpu.key
    assert [m.fix() for m in back.missing] == [m.fix() for m in report.missing]
    listed = store.runs()
    assert listed.loc[0, "params"] == {"batch_size": "8"} and listed.loc[0, "launches"] == 5
    assert store.load(str(listed.loc[0, "id"])).meta.source == report.meta.source


def test_names_are_unique_and_unknown_runs_are_one_line_errors(store):
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    store.save(report, "run")
    assert store.save_unique(report, "run") == "run-1"
    assert store.save_unique(report, "run") == "run-2"
    with pytest.raises(Exception, match="no such run"):
        store.load("nope")


WRITER = """
import sys
from flopscope.core import FlopscopeError, read_report
from flopscope.core.store.run_store import Store
report = read_report(sys.argv[1])
store = Store()
for i in range(10_000):
    store.save(report, f"r{i}")
    print(i, flush=True)
"""


def test_killing_a_writer_leaves_a_consistent_store(tmp_path):
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    report = fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep")
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(report)], stdout=subprocess.PIPE, text=True, env=env
    )
    for line in proc.stdout:
        if int(line.split()[0]) >= 5:
            break
    time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    db = sqlite3.connect(tmp_path / "flopscope.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    store = Store(tmp_path / "flopscope.db")
    runs = store.runs()
    assert len(runs) >= 6
    for name in runs["name"]:
        assert len(store.load(name).kernels) == 154


def test_diff_lines_up_kernel_groups(store):
    a = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    b = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"))
    rows = diff_runs(a, a)
    assert (rows["duration_s_delta"] == 0).all() and (rows["presence"] == "both").all()
    rows = diff_runs(a, b)
    assert set(rows["presence"]) == {"only in A", "only in B"}
    only_b = rows[rows["presence"] == "only in B"]
    assert only_b["duration_s_delta"].sum() == pytest.approx(b.kernels["duration_s"].sum())


def test_runs_and_diff_commands(tmp_path):
    store = Store(tmp_path / "flopscope.db")
    store.save(read_report(fixture_path("t4_mlp_matadd_full.ncu-rep")), "a")
    store.save(read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")), "b")

    listed = json.loads(cli("runs", "--json", home=tmp_path).stdout)
    assert [r["name"] for r in listed] == ["b", "a"]  # newest first
    out = cli("diff", "a", "b", home=tmp_path)
    assert out.returncode == 0 and "matrix_addition2D" in out.stdout and "only in A" in out.stdout
    missing = cli("diff", "a", "zzz", home=tmp_path)
    assert missing.returncode == 2 and "no such run" in missing.stderr
    # Before: "only in A" rows had B/A = 0.0 and "only in B" rows null, and counts were floats
    # (4.0).
    rows = json.loads(cli("diff", "a", "b", "--json", home=tmp_path).stdout)["rows"]
    launches = {
        side: read_report(fixture_path(f)).kernels["kernel_full"].value_counts()
        for side, f in (
            ("a", "t4_mlp_matadd_full.ncu-rep"),
            ("b", "v100_ncar_miniweather_fp64_full.ncu-rep"),
        )
    }
    assert {r["presence"] for r in rows} == {"only in A", "only in B"}
    for row in rows:
        side, other = ("a", "b") if row["presence"] == "only in A" else ("b", "a")
        assert all(
            row[f"{col}_ratio"] is None for col in ("count", "duration_s", "flop", "dram_bytes")
        ), row
        assert (
            row[f"count_{side}"] == launches[side][row["kernel_full"]]
            and type(row[f"count_{side}"]) is int
        )
        assert row[f"count_{other}"] is None


def test_a_full_disk_during_save_is_one_line_and_keeps_the_earlier_runs(store):
    """SQLite's page limit is how it meets a full disk (SQLITE_FULL, "database or disk is full")."""
    small = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    big = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    store.save(small, "before")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(FlopscopeError) as caught:
        store.save_unique(big, "big")
    line = caught.value.line()
    assert "cannot store run big: the disk is full" in line and "free space on it" in line
    assert "move it aside" not in line
    assert list(store.runs()["name"]) == ["before"]  # the failed run left nothing half-written
    store.db.execute("PRAGMA max_page_count = 1073741823")
    assert store.save_unique(big, "big") == "big"  # the same connection works once there is room
    assert len(store.load("big").kernels) == len(big.kernels) == 154


def test_a_store_locked_by_another_writer_says_so_not_move_it_aside(tmp_path, monkeypatch):
    monkeypatch.setattr(Store, "timeout", 0.2)
    path = tmp_path / "flopscope.db"
    Store(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        s = Store(path)
        with pytest.raises(FlopscopeError) as caught:
            s.check_writable()
        assert "another process kept the store locked" in caught.value.line()
        assert "move it aside" not in caught.value.line()
        with pytest.raises(FlopscopeError, match="locked"):
            s.save(read_report(fixture_path("t4_mlp_matadd_full.ncu-rep")), "x")
        s.close()
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_file_that_is_not_a_database_is_to_be_moved_aside(tmp_path):
    (tmp_path / "flopscope.db").write_bytes(b"not sqlite " * 500)
    line = one_line(cli("runs", "--no-tui", home=tmp_path))
    assert "not a usable database" in line and "move it aside" in line


def test_flopscope_home_that_is_a_file_is_one_line(tmp_path):
    home = tmp_path / "home"
    home.write_text("a file")
    for args in (
        ["runs", "--no-tui"],
        ["profile", "--no-tui", "--ncu", sys.executable, "--", "true"],
    ):
        line = one_line(cli(*args, home=home))
        assert line.startswith(f"flopscope: {home} (FLOPSCOPE_HOME): a file is in the way")
        assert "set FLOPSCOPE_HOME to a writable folder" in line


@pytest.fixture
def read_only_home(tmp_path):
    """A real read-only file system (a tmpfs remounted read-only) holding a healthy store; needs
    root."""
    home = tmp_path / "ro"
    home.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(home)], capture_output=True
    ).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root): the read-only case is not exercised")
    try:
        s = Store(home / "flopscope.db")
        s.save(read_report(fixture_path("t4_mlp_matadd_full.ncu-rep")), "kept")
        s.close()  # an open database keeps the mount busy
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def test_a_read_only_store_reads_and_says_read_only_before_profiling(read_only_home, tmp_path):
    listed = cli("runs", "--json", home=read_only_home)
    assert listed.returncode == 0, listed.stderr
    assert [run["name"] for run in json.loads(listed.stdout)] == ["kept"]
    opened = cli("open", "kept", "--json", home=read_only_home)
    assert opened.returncode == 0, opened.stderr
    direct = cli("report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--json", home=tmp_path)
    assert json.loads(opened.stdout)["rows"] == json.loads(direct.stdout)["rows"]
    assert cli("diff", "kept", "kept", "--json", home=read_only_home).returncode == 0
    line = one_line(
        cli("profile", "--no-tui", "--ncu", sys.executable, "--", "true", home=read_only_home)
    )
    # refused before ncu ran: no profile whose result would be lost
    assert "read-only file system" in line
    line = one_line(
        cli(
            "profile",
            "--no-tui",
            "--ncu",
            sys.executable,
            "--",
            "true",
            home=read_only_home / "new",
        )
    )
    assert line.startswith(
        f"flopscope: {read_only_home / 'new'} (FLOPSCOPE_HOME): cannot write here: read-only"
    )


SAVER = """
import sys
from flopscope.core import FlopscopeError, read_report
from flopscope.core.store.run_store import Store
report = read_report(sys.argv[1])
store = Store()
print("ready", flush=True)
sys.stdin.readline()  # both processes start saving together
for _ in range(40):
    store.save_unique(report, "same")
"""


def test_two_processes_saving_one_name_lose_nothing(tmp_path):
    """The name is chosen inside the insert's transaction: 80 saves of `same` from two processes at
    once give 80 runs named same, same-1 ... same-79 (choosing first and inserting after lost 35 of
    80 to IntegrityError)."""
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    report = fixture_path("t4_mlp_matadd_full.ncu-rep")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAVER, str(report)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    names = set(Store(tmp_path / "flopscope.db").runs()["name"])
    assert names == {"same", *(f"same-{n}" for n in range(1, 80))}


# -- one damaged row does not break the others
# -------------------------------------------------------------------
@pytest.fixture
def damaged_home(tmp_path):
    """Three runs of sweep `s` (bs 1, 2, 4) and one plain run; tests then damage one row with raw
    SQL."""
    s = Store(tmp_path / "flopscope.db")
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    for bs in ("1", "2", "4"):
        s.save(report, f"s-bs{bs}", kind="sweep", sweep="s", params={"bs": bs})
    s.save(report, "plain")
    s.close()
    return tmp_path


def damage(home, column: str, value, name: str) -> None:
    db = sqlite3.connect(home / "flopscope.db")
    db.execute(f"UPDATE runs SET {column} = ? WHERE name = ?", (value, name))
    db.commit()
    db.close()


def test_bad_params_json_is_listed_with_a_warning_and_left_out_of_its_sweep(damaged_home):
    damage(damaged_home, "params", "{not json", "s-bs2")
    out = cli("runs", "--json", home=damaged_home)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    assert [r["name"] for r in listed] == ["plain", "s-bs4", "s-bs2", "s-bs1"]  # newest first
    assert listed[2]["params"] == {}
    assert (
        out.stderr.strip()
        == "flopscope: warning: run s-bs2: its parameters are not readable JSON; listed without"
        " parameters"
    )
    out = cli("runs", "--no-tui", home=damaged_home)
    assert out.returncode == 0 and "s-bs4" in out.stdout and "run s-bs2" in out.stderr
    out = cli("open", "s", "--json", home=damaged_home)
    assert out.returncode == 0, out.stderr
    assert [p["bs"] for p in json.loads(out.stdout)["analyses"][0]["points"]] == [1, 4]
    assert "left out of sweep s" in out.stderr and "(run s-bs2)" in out.stderr


def test_a_library_user_loads_a_sweep_with_core_alone_and_is_warned_of_a_damaged_run(damaged_home):
    """core.scaling.load_sweep needs no tui (nor Textual): a damaged run is left out with a Python
    warning, or with the `warn` callback's message, the one the CLI prints after `flopscope:
    warning: `."""
    damage(damaged_home, "kernels", b"PAR1 this is no parquet", "s-bs2")
    script = textwrap.dedent(f"""
        import json, sys, warnings
        from flopscope.core.analysis.scaling import load_sweep
        from flopscope.core.store.run_store import Store
        db = {str(damaged_home / "flopscope.db")!r}
        with warnings.catch_warnings(record=True) as caught, Store(db) as store:
            warnings.simplefilter("always")
            lines = load_sweep("s", store)
            told = []
            assert load_sweep("s", store, told.append)[0].param == "bs"
        ui = sorted(m for m in sys.modules if m.startswith(("flopscope.tui", "textual")))
        said = [str(w.message) for w in caught]
        print(json.dumps([[v for v, _ in lines[0].points], said, told, ui]))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    points, warned, told, imported = json.loads(out.stdout)
    assert points == [1.0, 4.0]
    assert warned == told and len(told) == 1
    assert told[0].startswith("left out of sweep s: its stored data is damaged (ArrowInvalid")
    assert told[0].endswith("(run s-bs2)")
    assert imported == []


@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("meta", "{not json", "JSONDecodeError"),
        ("kernels", b"PAR1 this is no parquet", "ArrowInvalid"),
    ],
)
def test_a_damaged_run_is_one_line_naming_it_and_the_others_still_open(
    damaged_home, column, value, what
):
    damage(damaged_home, column, value, "plain")
    line = one_line(cli("open", "plain", "--json", home=damaged_home))
    assert line.startswith("flopscope: run plain: its stored data is damaged (") and what in line
    assert "the other runs are intact" in line
    assert cli("open", "s-bs1", "--json", home=damaged_home).returncode == 0
    assert cli("runs", "--json", home=damaged_home).returncode == 0
    damage(damaged_home, column, value, "s-bs4")
    out = cli("open", "s", "--json", home=damaged_home)
    assert out.returncode == 0, out.stderr
    assert [p["bs"] for p in json.loads(out.stdout)["analyses"][0]["points"]] == [1, 2]
    assert "(run s-bs4)" in out.stderr


def test_import_stores_a_run_folder_the_store_could_not_take(tmp_path):
    run = tmp_path / "runs" / "mw"
    run.mkdir(parents=True)
    (run / "report.ncu-rep").write_bytes(
        fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep").read_bytes()
    )
    (run / "run.json").write_text(
        json.dumps({"host": "gpubox", "command": ["./mw", "--steps", "3"]})
    )
    out = cli("import", run, home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "as run mw" in out.stderr
    listed = json.loads(cli("runs", "--json", home=tmp_path).stdout)
    assert [(r["name"], r["host"], r["launches"]) for r in listed] == [("mw", "gpubox", 5)]
    # a second copy would show up in every list and diff
    again = one_line(cli("import", run, home=tmp_path))
    assert "already stored as run mw" in again and "--name" in again
    # asked for: a second copy
    assert cli("import", run, "--name", "mw", home=tmp_path).returncode == 0
    # newest first; one capture time (ncu's, kept by the import): the later stored first
    assert [r["name"] for r in json.loads(cli("runs", "--json", home=tmp_path).stdout)] == [
        "mw-1",
        "mw",
    ]
    assert "no report.ncu-rep" in one_line(cli("import", tmp_path, home=tmp_path))


def test_a_run_stored_with_the_untyped_meta_of_earlier_builds_loads_and_is_kept_as_it_was(store):
    """Meta as earlier builds wrote it (`{**meta, "missing": [Missing.__dict__],
    "listed_lower_bounds": []}`): no reader_note nor captured, a device without its gpu_source, and
    a key this build does not know. It loads into ReportMeta, keeps the unknown key, and a second
    save writes every value back."""
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    store.save(report, "old")
    old = {
        "source": "/runs/old/report.ncu-rep",
        "format": "ncu-rep",
        "gpu": "Tesla T4",
        "gpu_database_key": "t4",
        "gpu_database_name": "Tesla T4",
        "gpu_source": "report",
        "gpus": [
            {"name": "Tesla T4", "database_key": "t4", "compute_capability": "7.5", "launches": 2}
        ],
        "compute_capability": "7.5",
        "launches": 2,
        "metrics_collected": ["gpu__time_duration.sum"],
        "missing": [
            {
                "column": "l1_bytes",
                "metrics": ["l1tex__t_bytes.sum"],
                "launches": 2,
                "why": "not collected",
                "detail": "",
            }
        ],
        "convention": "FMA = 2 FLOPs",
        "params": {"host": "gpubox"},
        "warning": "the command exited with code 3",
        "sampled_by": "an older build",
        "listed_lower_bounds": [],
    }
    store.db.execute("UPDATE runs SET meta = ? WHERE name = 'old'", (json.dumps(old),))
    store.db.commit()
    back = store.load("old")
    meta = back.meta
    assert (meta.source, meta.format, meta.gpu, meta.gpu_database_key, meta.launches) == (
        "/runs/old/report.ncu-rep",
        "ncu-rep",
        "Tesla T4",
        "t4",
        2,
    )
    assert (meta.reader_note, meta.captured, meta.run, meta.warning) == (
        None,
        None,
        "old",
        "the command exited with code 3",
    )
    assert [
        (g.name, g.database_key, g.compute_capability, g.launches, g.gpu_source) for g in meta.gpus
    ] == [("Tesla T4", "t4", "7.5", 2, None)]
    assert meta.metrics_collected == ("gpu__time_duration.sum",) and meta.params == {
        "host": "gpubox"
    }
    assert meta.extra == {"sampled_by": "an older build"}
    assert [(m.column, m.fix()) for m in back.missing] == [
        ("l1_bytes", "ncu --metrics l1tex__t_bytes.sum")
    ]
    store.save(back, "again")
    again = json.loads(store.db.execute("SELECT meta FROM runs WHERE name = 'again'").fetchone()[0])
    # What the old row said, said again; the keys it lacked now written as unknown (null).
    assert again == {
        **old,
        "reader_note": None,
        "captured": None,
        "gpus": [{**old["gpus"][0], "gpu_source": None}],
    }
