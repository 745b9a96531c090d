"""A damaged store: one bad row costs only its own run; a damaged file is one line with the fix
(`flopscope recover`), and nothing stored is lost. Real SQLite files, damaged with raw SQL or by
overwriting a page. (A full disk: tests/cli/test_full_disk.py.)"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from flopscope.core import FlopscopeError
from flopscope.core.store.ceilings import load_all, save
from flopscope.core.store.run_store import Store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import fixture_path
from ..helpers.ceilings import synthetic
from ..helpers.cli import run_cli as cli
from ..helpers.real_files import report_of
from ..helpers.store import one_line

SMALL = "t4_mlp_matadd_full.ncu-rep"


@pytest.fixture
def home(tmp_path):
    """Runs `a`, `b`, `c` (ids 1-3) of one real report; tests damage `b` with raw SQL."""
    with Store(tmp_path / "flopscope.db") as store:
        report = report_of(fixture_path(SMALL))
        for name in "abc":
            store.save(report, name)
    return tmp_path


def damage_row(home, assignment: str, *args) -> None:
    db = sqlite3.connect(home / "flopscope.db")
    db.execute(f"UPDATE runs SET {assignment} WHERE id = 2", args)
    db.commit()
    db.close()


def run_folder(home, name: str = "new"):
    """A run folder as `flopscope profile` leaves it, for `import`."""
    folder = home / "runs" / name
    folder.mkdir(parents=True)
    shutil.copyfile(fixture_path(SMALL), folder / "report.ncu-rep")
    return folder


# Before: malformed meta broke every later `import` (json_extract: "malformed JSON" traceback);
# non-UTF-8 text broke `open`/`diff` of the run ("Could not decode to UTF-8" traceback), and in a
# listed column every `runs`.
DAMAGES = [
    ("meta = '{not json'", (), "its meta is not valid JSON"),
    (
        "meta = CAST(? AS TEXT)",
        (b'{"source": "/tmp/r\xff.ncu-rep"}',),
        "its meta is not UTF-8 text",
    ),
    ("meta = ?", (b"\x00\xff",), "its meta is not UTF-8 text"),
    ("meta = '[1, 2]'", (), "its meta is not a JSON object"),
    ("kernels = ?", (b"PAR1",), "its kernels table is missing or cut short"),
    ("name = CAST(? AS TEXT)", (b"b\xff",), "its name is not UTF-8 text"),
]


def flopscope(capsys, *args) -> tuple[int, str, str]:
    """The CLI in this process (as fast as a library call): exit code, stdout, stderr."""
    from flopscope.tui.cli import main

    code = main.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(result: tuple[int, str, str]) -> str:
    code, _, err = result
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize(("assignment", "args", "problem"), DAMAGES)
def test_a_damaged_row_is_marked_and_costs_only_its_own_run(
    home, monkeypatch, capsys, assignment, args, problem
):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(home))
    damage_row(home, assignment, *args)
    name = "b\ufffd" if assignment.startswith("name") else "b"
    code, out, err = flopscope(capsys, "runs", "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert [(r["id"], r["name"]) for r in listed] == [(3, "c"), (2, name), (1, "a")]  # newest first
    assert [r["damaged"] for r in listed][::2] == [None, None]
    assert (
        listed[1]["damaged"]
        == f"{problem}: `open` and `diff` of it fail; the other runs are intact"
    )
    assert err == f"flopscope: warning: run {name}: {listed[1]['damaged']}\n"
    code, out, _ = flopscope(capsys, "runs", "--no-tui")
    assert code == 0 and f"{name} (damaged)" in out and " a " in out
    for args in (["open", "2", "--json"], ["diff", "a", "2", "--json"], ["diff", "2", "c"]):
        line = one_error(flopscope(capsys, *args))
        assert line.startswith(f"flopscope: run {name}: its stored data is damaged ("), line
        assert "the other runs are intact; profile it again" in line
    assert flopscope(capsys, "diff", "a", "c", "--json")[0] == 0
    code, _, err = flopscope(capsys, "import", run_folder(home))
    assert code == 0, err
    # newest capture first: the import keeps its report's own (older) capture time
    assert [r["name"] for r in json.loads(flopscope(capsys, "runs", "--json")[1])] == [
        "c",
        name,
        "a",
        "new",
    ]
    assert flopscope(capsys, "open", "new", "--json")[0] == 0


@pytest.mark.parametrize(("assignment", "args", "problem"), [DAMAGES[0], DAMAGES[4]])
async def test_the_runs_screen_says_which_row_is_damaged(
    home, monkeypatch, assignment, args, problem
):
    """The app lists every run as `flopscope runs` does and says which row is damaged and what that
    costs."""
    from flopscope.tui.app.launch import runs_app
    from flopscope.tui.app.widgets.kernel_table import KernelTable
    from textual.app import App

    from ..conftest import settle

    damage_row(home, assignment, *args)
    notes: list[str] = []
    monkeypatch.setattr(App, "notify", lambda self, message, **kw: notes.append(message))
    app = runs_app(home / "flopscope.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: app.screen.query(KernelTable) and app.first.model is not None)
        assert app.first.model.rows["name"].tolist() == ["c", "b", "a"]
    assert notes == [f"run b: {problem}: `open` and `diff` of it fail; the other runs are intact"]


def test_a_damaged_row_is_one_line_from_the_command_line_too(home):
    """As a user runs it (a process of its own): the line, exit 2, no traceback."""
    damage_row(home, "meta = CAST(? AS TEXT)", b'{"source": "\xff"}')
    line = one_line(cli("open", "b", "--json", home=home))
    assert line.startswith(
        "flopscope: run b: its stored data is damaged (its meta is not UTF-8 text)"
    )


def test_text_that_is_not_utf8_in_a_listed_column_is_shown_and_the_run_still_opens(home):
    """Before: `runs` failed whole ("Could not decode to UTF-8 column 'gpu'"), hiding every run."""
    damage_row(home, "gpu = CAST(? AS TEXT)", b"Tesla T4\xff")
    out = cli("runs", "--json", home=home)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    assert [r["gpu"] for r in listed] == ["Tesla T4", "Tesla T4\ufffd", "Tesla T4"]
    assert listed[1]["damaged"].startswith("its gpu is not UTF-8 text; shown with U+FFFD")
    assert cli("open", "b", "--json", home=home).returncode == 0


def test_parameters_that_are_not_utf8_leave_the_run_out_of_its_sweep_only(tmp_path):
    with Store(tmp_path / "flopscope.db") as store:
        report = report_of(fixture_path(SMALL))
        for bs in ("1", "2", "4"):
            store.save(report, f"s-bs{bs}", kind="sweep", sweep="s", params={"bs": bs})
    db = sqlite3.connect(tmp_path / "flopscope.db")
    db.execute(
        "UPDATE runs SET params = CAST(? AS TEXT) WHERE name = 's-bs2'", (b'{"bs": "2\xff"}',)
    )
    db.commit()
    db.close()
    out = cli("runs", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (
        out.stderr
        == "flopscope: warning: run s-bs2: its parameters are not UTF-8 text; listed without"
        " parameters\n"
    )
    out = cli("open", "s", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [p["bs"] for p in json.loads(out.stdout)["analyses"][0]["points"]] == [1, 4]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    column=st.sampled_from(["meta", "params", "kernels", "name", "sweep", "host", "gpu", "kind"]),
    cut=st.integers(0, 400),
    junk=st.binary(max_size=12),
    as_text=st.booleans(),
)
def test_any_damage_to_one_row_leaves_the_other_runs_listed_and_readable(
    home, column, cut, junk, as_text
):
    """Fuzz: a row's column cut short and overwritten with random bytes, as text or as a blob. The
    list keeps every run; the other runs load whole; the damaged one loads or is one FlopscopeError
    line naming it."""
    path = home / "fuzz.db"
    shutil.copyfile(home / "flopscope.db", path)
    db = sqlite3.connect(path)
    old = db.execute(f"SELECT CAST({column} AS BLOB) FROM runs WHERE id = 2").fetchone()[0] or b""
    new = old[:cut] + junk
    if column != "name" or new not in (b"a", b"c"):  # a name taken is refused by the UNIQUE column
        db.execute(
            f"UPDATE runs SET {column} = {'CAST(? AS TEXT)' if as_text else '?'} WHERE id = 2",
            (new,),
        )
    db.commit()
    db.close()
    with Store(path) as store:
        listed = store.runs()
        assert list(listed["id"]) == [1, 2, 3]
        assert listed["damaged"][0] is None and listed["damaged"][2] is None
        for ref in ("a", "c"):
            assert len(store.load(ref).kernels) == 1
        try:
            store.load(2)
        except FlopscopeError as err:
            assert err.path.startswith("run ") and "\n" not in err.line()


# -- a damaged store file: one line with the fix, and `flopscope recover`
# ----------------------------------------
def zero_a_page_of_the_last_run(path: Path) -> None:
    """Zero the first overflow page of the runs table's last row (run c's stored kernels table), the
    WAL checkpointed first: a disk or copy fault in one run's data wherever SQLite laid the rows out
    (the file's last page can be the end of a chain, whose loss quick_check cannot see)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.execute("PRAGMA page_size").fetchone()[0]
    chains = db.execute(
        "SELECT pageno, path FROM dbstat WHERE name = 'runs' AND pagetype = 'overflow'"
    ).fetchall()
    db.close()
    last = max(where.split("+")[0] for _, where in chains)
    page = next(number for number, where in chains if where == f"{last}+000000")
    with path.open("r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\0" * size)


@pytest.fixture
def damaged_file(tmp_path):
    """A store of runs a, b, c with a page of run c's data zeroed (a disk or copy fault);
    returns its folder and each run's `open --json` from before the damage."""
    files = {"a": SMALL, "b": "v100_ncar_miniweather_fp64_full.ncu-rep", "c": SMALL}
    # Run c's long command (stored before its meta) puts the meta past the zeroed page, so the run
    # list, which reads the meta, meets the broken chain: else where the row splits between its leaf
    # and overflow pages, which moves with the size of every stored column, decides whether the list
    # sees the damage.
    long_command = [
        "python3",
        "train.py",
        *(f"--layer{i}.weight=checkpoints/step_{i:05d}.pt" for i in range(200)),
    ]
    with Store(tmp_path / "flopscope.db") as store:
        for name, fixture in files.items():
            store.save(
                report_of(fixture_path(fixture)),
                name,
                command=long_command if name == "c" else None,
            )
    before = {name: json.loads(cli("open", name, "--json", home=tmp_path).stdout) for name in files}
    zero_a_page_of_the_last_run(tmp_path / "flopscope.db")
    return tmp_path, before


def test_a_damaged_store_file_is_one_line_naming_it_and_recover_keeps_the_intact_runs(
    damaged_file, monkeypatch, capsys
):
    """Before: `open`/`diff` of a run on the zeroed page: "database disk image is malformed"
    traceback; `runs`: "not a usable database; move it aside" (so a user would set aside every run
    for one page) and listed none."""
    home, before = damaged_file
    store = home / "flopscope.db"
    damaged_bytes = store.read_bytes()
    monkeypatch.setenv("FLOPSCOPE_HOME", str(home))
    readable = {n for n in before if flopscope(capsys, "open", n, "--json")[0] == 0}
    assert readable and readable != set(before)  # the zeroed page holds some run's row, not all
    lost = sorted(set(before) - readable)
    line = one_line(cli("open", lost[0], "--json", home=home))
    assert line.startswith(
        f"flopscope: {store}: the run store file is damaged (database disk image is malformed; "
        "quick_check: *** in database main *** "
    )
    assert line.endswith(
        "`flopscope recover` copies the runs on its intact pages into a new store in its place "
        "and keeps this file beside it, renamed"
    )
    code, out, err = flopscope(capsys, "runs", "--json")  # the list goes on around the damaged page
    listed = json.loads(out)
    assert code == 0 and sorted(r["id"] for r in listed) == [1, 2, 3]
    page = (
        "its row is on a damaged page of the store file: `flopscope recover` copies the other runs"
        " into a new store"
    )
    assert {r["name"] for r in listed if r["damaged"] is None} == readable
    assert all(r["damaged"] == page for r in listed if r["name"] not in readable)
    assert err.count("flopscope: warning: run ") == len(lost)
    assert one_error(flopscope(capsys, "diff", "a", lost[0])).startswith(
        f"flopscope: {store}: the run store file is damaged ("
    )
    assert store.read_bytes() == damaged_bytes  # nothing written to it
    code, _, err = flopscope(capsys, "recover")
    kept = next(
        p for p in home.glob("flopscope.db.damaged-*") if not p.name.endswith(("-wal", "-shm"))
    )
    assert (
        code == 1
        and err.splitlines()[-1]
        == f"flopscope: recovered {len(readable)} of 3 run(s) into a new {store}; the damaged file"
        f" is kept as {kept}"
    )
    assert kept.read_bytes() == damaged_bytes
    code, out, err = flopscope(capsys, "runs", "--json")
    assert code == 0 and err == ""
    assert {(r["id"], r["name"]) for r in json.loads(out)} == {
        (i, n) for i, n in enumerate("abc", 1) if n in readable
    }
    for name in readable:
        code, out, _ = flopscope(capsys, "open", name, "--json")
        assert code == 0 and json.loads(out)["rows"] == before[name]["rows"]
    imported = flopscope(capsys, "import", run_folder(home))
    assert imported[0] == 0, imported[2]
    assert one_error(flopscope(capsys, "recover")).endswith(
        "SQLite finds no damage in this run store (PRAGMA "
        "quick_check: ok); nothing to recover; `flopscope runs` "
        "lists its runs"
    )


def test_recover_leaves_a_store_whose_runs_are_all_unreadable_as_it_is(
    tmp_path, monkeypatch, capsys
):
    with Store(tmp_path / "flopscope.db") as store:
        store.save(report_of(fixture_path(SMALL)), "only")
    db = sqlite3.connect(tmp_path / "flopscope.db")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
    db.close()
    # the runs table's only leaf: every row goes
    with (tmp_path / "flopscope.db").open("r+b") as handle:
        handle.seek((root - 1) * page)
        handle.write(b"\xff" * page)
    damaged = (tmp_path / "flopscope.db").read_bytes()
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    line = one_error(flopscope(capsys, "recover"))
    assert line.startswith(
        f"flopscope: {tmp_path / 'flopscope.db'}: no run in this damaged store could be read ("
    )
    assert {p.name for p in tmp_path.iterdir()} - {"flopscope.db-wal", "flopscope.db-shm"} == {
        "flopscope.db"
    }
    assert (tmp_path / "flopscope.db").read_bytes() == damaged


def test_recover_keeps_the_ceilings_measured_on_nodes(tmp_path, monkeypatch, capsys):
    """Before: `recover` copied runs and sweep names only, so every `flopscope ceilings` result (a
    GPU needed to measure it again) was gone from the new store."""
    stored = [
        synthetic(),
        synthetic(driver="570.133.20", measured=1.6e9),
        synthetic(host="other", measured=1.5e9),
    ]
    with Store(tmp_path / "flopscope.db") as store:
        for c in stored:
            save(store, c)
        for name in "abc":  # a page of run c is zeroed, not the ceilings
            store.save(
                report_of(
                    fixture_path(
                        "v100_ncar_miniweather_fp64_full.ncu-rep" if name == "b" else SMALL
                    )
                ),
                name,
            )
    zero_a_page_of_the_last_run(tmp_path / "flopscope.db")
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    assert flopscope(capsys, "recover")[0] in (0, 1)
    with Store(tmp_path / "flopscope.db") as store:
        got = load_all(store)
    assert [(c.host, c.gpu, c.driver, c.measured, c.values, c.how, c.origin) for c in got] == [
        (c.host, c.gpu, c.driver, c.measured, c.values, c.how, c.origin) for c in stored
    ]


@pytest.mark.parametrize("column", ["created", "launches", "total_time_s", "total_flop"])
def test_a_listed_number_stored_as_text_is_blank_and_named_not_a_traceback(
    home, monkeypatch, capsys, column
):
    """`created = 'abc'` gave a traceback in `runs` and killed the app's Runs screen."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(home))
    damage_row(home, f"{column} = 'abc'")
    code, out, err = flopscope(capsys, "runs", "--json")
    assert code == 0, err
    # newest first: b last where its time is unreadable
    listed = {r["name"]: r for r in json.loads(out)}
    assert sorted(listed) == ["a", "b", "c"] and listed["b"][column] is None
    assert listed["b"]["damaged"] == f"its {column} is not a number: listed blank"
    assert err == f"flopscope: warning: run b: {listed['b']['damaged']}\n"
    code, out, _ = flopscope(capsys, "runs", "--no-tui")
    assert code == 0 and "b (damaged)" in out
    assert flopscope(capsys, "open", "b", "--json")[0] == 0  # its data is whole: it still opens


async def test_the_runs_screen_lists_a_run_whose_time_is_text(home):
    from flopscope.tui.app.launch import runs_app
    from flopscope.tui.app.widgets.kernel_table import KernelTable

    from ..conftest import settle

    damage_row(home, "created = 'abc'")
    app = runs_app(home / "flopscope.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: app.screen.query(KernelTable) and app.first.model is not None)
        assert sorted(app.first.model.rows["name"].tolist()) == ["a", "b", "c"]
