"""The run store: one SQLite file in the data directory holding every run (meta + kernels).

Kernels are kept as a Parquet blob per run (a 100k-launch table stores and loads in well under a
second); each run is written in one transaction, so a process killed mid-write leaves earlier runs
intact and the half-written one absent. A run's name is chosen inside the transaction that inserts
it, so two processes saving `x` at once get `x` and `x-1`, never an error. SQLite's own failures
(disk full, locked, read-only, not a database) become one StoreError line with the fix for that
case."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError
from ..common.gpus import find_gpu
from ..common.home import data_home, ensure_folder
from ..export.cells import arrow_safe
from ..report.meta import ReportMeta
from ..report.report import Report
from ..table.counters import Missing
from ..table.summary import KNOWN_PART

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    kind TEXT NOT NULL,
    sweep TEXT,
    params TEXT NOT NULL,
    host TEXT,
    command TEXT,
    gpu TEXT,
    launches INTEGER,
    total_time_s REAL,
    total_flop REAL,
    meta TEXT NOT NULL,
    kernels BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_sweep ON runs (sweep);
CREATE TABLE IF NOT EXISTS sweeps (name TEXT PRIMARY KEY, created REAL NOT NULL);
"""
LISTED = [
    "id",
    "name",
    "created",
    "kind",
    "sweep",
    "params",
    "host",
    "gpu",
    "launches",
    "total_time_s",
    "total_flop",
]
# in a stored run's meta: which of its listed totals are only the known part
LOWER_BOUNDS = "listed_lower_bounds"
# json_valid first: a damaged row's meta must not fail the whole list.
_LOWER_BOUNDS = (
    f"CASE WHEN json_valid(meta) THEN json_extract(meta, '$.{LOWER_BOUNDS}') END AS lower_bounds"
)
# What `load` would refuse in a row, found without reading its kernels (a list must not read every
# table): the blob's length is in its row header, its bytes are not.
_ROW_PROBLEM = """CASE
    WHEN typeof(meta) != 'text' OR NOT is_utf8(CAST(meta AS BLOB)) THEN 'its meta is not UTF-8 text'
    WHEN NOT json_valid(meta) THEN 'its meta is not valid JSON'
    WHEN json_type(meta) != 'object' THEN 'its meta is not a JSON object'
    WHEN typeof(kernels) != 'blob' OR length(kernels) < 12
        THEN 'its kernels table is missing or cut short'
END AS damaged"""
_ON_DAMAGED_PAGE = "its row is on a damaged page of the store file"
_NUMBERS = ["created", "launches", "total_time_s", "total_flop"]  # listed columns that hold numbers


class StoreError(FlopscopeError):
    """The store itself failed (not one run's data): nothing more can be stored until it is
    fixed."""


def store_error(path: Path, exc: sqlite3.Error, doing: str) -> StoreError:
    """SQLite's failure as one line whose fix fits the cause: a healthy database on a full or
    read-only disk must not be "moved aside"."""
    text = str(exc)
    home = "or set FLOPSCOPE_HOME to a folder on another disk"
    # Opening a store on a full disk fails to make its -shm file: SQLite says only "disk I/O error"
    # then.
    if "full" in text or ("I/O" in text and _no_space_left(path.parent)):
        return StoreError(path, f"{doing}: the disk is full ({text})", f"free space on it, {home}")
    if "locked" in text or "busy" in text:
        return StoreError(
            path,
            f"{doing}: another process kept the store locked ({text})",
            "let the other flopscope (or sqlite3) finish, then run this again",
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        why = (
            "it is on a read-only file system"
            if _read_only_fs(path.parent)
            else "it or its folder is not writable"
        )
        return StoreError(
            path,
            f"{doing}: {why} ({text})",
            f"make {path.parent} writable, or set FLOPSCOPE_HOME to a writable folder",
        )
    # I/O errors and the like: the file is not to blame
    if isinstance(exc, sqlite3.OperationalError):
        return StoreError(path, f"{doing}: {text}", f"check the disk holding it, {home}")
    if is_damaged_file(exc):
        return damaged_file(path, text)
    return StoreError(
        path,
        f"the run store is not a usable database ({text})",
        "move it aside; set FLOPSCOPE_HOME to use another folder",
    )


def is_damaged_file(exc: sqlite3.Error) -> bool:
    """SQLITE_CORRUPT: a page of the file is damaged, not the whole file foreign (that is "not a
    database")."""
    return "malformed" in str(exc) or getattr(exc, "sqlite_errorname", "").startswith(
        "SQLITE_CORRUPT"
    )


def damaged_file(path: Path, text: str) -> StoreError:
    """A store file with damaged pages (a disk or copy fault): the runs on its intact pages can
    still be had, so the fix is copying them out (core/store/recover.py), never deleting or
    rewriting this file."""
    found = quick_check(path)
    return StoreError(
        path,
        f"the run store file is damaged ({text}{'; quick_check: ' + found if found else ''})",
        "`flopscope recover` copies the runs on its intact pages into a new store in its place and "
        "keeps this file beside it, renamed",
    )


def quick_check(path: Path) -> str:
    """SQLite's first complaint about the file (`PRAGMA quick_check`), "" if it cannot say: the
    detail a recovery needs, e.g. which page is damaged."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = [str(r[0]) for r in db.execute("PRAGMA quick_check(1)")]
        finally:
            db.close()
    except sqlite3.Error as exc:
        return str(exc)
    return "" if rows == ["ok"] else " ".join(" ".join(rows).split())[:200]


class Undecodable(str):
    """Text a row holds that is not UTF-8 (a damaged page, another program writing the file): read
    with U+FFFD in place of the bad bytes, so that listing goes on and the row is named as
    damaged."""


def _decode(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        return Undecodable(data.decode(errors="replace"))


def _is_utf8(data: object) -> bool:
    if not isinstance(data, bytes):
        return data is None
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


class AlreadyStored(Exception):
    """`Store.save(once_from=...)` found a run stored from that report file; `name` is that
    run's."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def _connected(db: sqlite3.Connection) -> sqlite3.Connection:
    """A connection on which no row's text can fail a whole query (see Undecodable)."""
    db.text_factory = _decode
    db.create_function("is_utf8", 1, _is_utf8, deterministic=True)
    return db


P = ParamSpec("P")
R = TypeVar("R")


def _reading(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """A read of the store: SQLite's failure (a damaged file, a vanished disk) is one StoreError
    line."""

    @functools.wraps(method)
    def read(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc, "cannot read the run store") from None

    return read


def _no_space_left(folder: Path) -> bool:
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


def _read_only_fs(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def default_path() -> Path:
    """The run store's file: in FLOPSCOPE_HOME, else the user's data directory."""
    return data_home() / "flopscope.db"


class Store:
    timeout = 30.0  # seconds to wait for another writer's lock before giving up

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_path()
        # run name -> what is wrong, for rows whose parameters are unreadable
        self.damaged: dict[str, str] = {}
        # run name -> what is wrong, for every damaged row `runs()` listed
        self.problems: dict[str, str] = {}
        self.read_only = False  # opened from a read-only file system: readable, every write refused
        if path:
            ensure_folder(self.path.parent)
        try:
            self.db = self._open()
        except sqlite3.Error as exc:
            if not (self.path.is_file() and _read_only_fs(self.path.parent)):
                raise store_error(self.path, exc, "cannot open the run store") from None
            self.db = self._open_read_only()

    def _open(self) -> sqlite3.Connection:
        db = _connected(sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None))
        # Switching a new store to WAL while another process does the same answers "database is
        # locked" at once, without SQLite's busy wait (two sweeps started together: one failed):
        # retried up to `timeout`.
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.executescript(SCHEMA)
                return db
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                db.close()
                raise
            except sqlite3.Error:
                db.close()
                raise

    def _open_read_only(self) -> sqlite3.Connection:
        """A store on a read-only file system (a backup, a read-only bind mount) can still be
        listed, opened and diffed: WAL mode needs a writable -shm file, but nothing can change the
        file under us there, so SQLite may treat it as immutable."""
        try:
            db = _connected(
                sqlite3.connect(
                    f"{self.path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None
                )
            )
            db.execute("SELECT 1 FROM runs LIMIT 1")
        except sqlite3.Error as exc:
            raise store_error(self.path, exc, "cannot open the run store") from None
        self.read_only = True
        return db

    def check_writable(self) -> None:
        """Take and release the write lock: a read-only or locked store fails here, before a profile
        is run whose result it could not keep."""
        if self.read_only:
            raise store_error(
                self.path,
                sqlite3.OperationalError("readonly database"),
                "cannot write the run store",
            )
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("ROLLBACK")
        except sqlite3.Error as exc:
            raise store_error(self.path, exc, "cannot write the run store") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def save(
        self,
        report: Report,
        name: str,
        *,
        kind: str = "profile",
        sweep: str | None = None,
        params: dict[str, Any] | None = None,
        host: str | None = None,
        command: list[str] | None = None,
        unique: bool = False,
        created: float | None = None,
        once_from: Path | None = None,
    ) -> int:
        """Store one run in a single transaction; returns its id. `unique`: if `name` is taken, the
        first free `name-N`, chosen inside the same transaction (see `save_unique`). `created`: when
        the run was captured (an imported run keeps its own time); now if not given. `once_from`:
        the report file the run is read from; if a run stored from it is already there,
        AlreadyStored, checked in the same transaction, so two imports of one folder at once store
        it once."""
        row = _row(report, kind, sweep, params, host, command, created)
        try:
            with self._transaction():
                if once_from is not None and (stored := self._source_run(once_from)) is not None:
                    raise AlreadyStored(stored)
                chosen = self._free_name(name) if unique else name
                cur = self.db.execute(
                    "INSERT INTO runs (name, created, kind, sweep, params, host, command, gpu,"
                    " launches, total_time_s, total_flop, meta, kernels) VALUES"
                    " (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (chosen, *row),
                )
        except sqlite3.IntegrityError:
            raise FlopscopeError(
                f"run {name}",
                "a run of this name is already stored",
                "pick another name (`flopscope runs` lists them)",
            ) from None
        except sqlite3.Error as exc:
            raise store_error(self.path, exc, f"cannot store run {name}") from None
        return int(cast(int, cur.lastrowid))  # an INSERT's row id: never None

    @_reading
    def stored_from(self, report_path: Path) -> str | None:
        """The run stored from this report file, if any (its path as read, resolved)."""
        return self._source_run(report_path)

    def _source_run(self, report_path: Path) -> str | None:
        target = Path(report_path).resolve()
        # A damaged row's meta is skipped (json_extract would fail the query): it cannot be the
        # stored copy.
        for name, source in self.db.execute(
            "SELECT name, CASE WHEN json_valid(meta) THEN json_extract(meta, '$.source') END FROM"
            " runs ORDER BY id"
        ):
            if isinstance(source, str) and source and Path(source).resolve() == target:
                return str(name)
        return None

    # `self, /`: no field can be named self, as `_reading`'s signature requires; `fields`: `save`'s
    # keywords
    @_reading
    def save_unique(self, /, report: Report, base: str, **fields: Any) -> str:
        """Store one run under `base`, or `base-N` if taken; returns the name it got. The choice and
        the insert are one transaction, so concurrent savers of one name never collide."""
        run_id = self.save(report, base, unique=True, **fields)
        return str(self.db.execute("SELECT name FROM runs WHERE id = ?", (run_id,)).fetchone()[0])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: a run is stored whole or not at
        all."""
        if self.read_only:  # an immutable connection would not even take the lock
            raise sqlite3.OperationalError("attempt to write a readonly database")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back itself (a full disk does)
                self.db.execute("ROLLBACK")
            raise

    @_reading
    def runs(self, sweep: str | None = None) -> pd.DataFrame:
        """The listed columns of every run (of `sweep`), in the order stored (`newest_first`: as
        lists show them), and `damaged`: what is wrong with a run's stored row, None if nothing. One
        bad row must not hide the others: a row whose parameters cannot be read is kept with no
        parameters and named in `self.damaged`; every damaged row is named in `self.problems`."""
        sql = f"SELECT {', '.join(LISTED)}, {_LOWER_BOUNDS}, {_ROW_PROBLEM} FROM runs"
        args: tuple[str, ...] = ()
        if sweep is not None:
            sql += " WHERE sweep = ?"
            args = (sweep,)
        try:
            rows = self.db.execute(sql + " ORDER BY id", args).fetchall()
        except sqlite3.DatabaseError as exc:
            if not is_damaged_file(exc):
                raise
            rows = self._rows_around_damage(
                sql + (" AND" if sweep is not None else " WHERE") + " id = ?", args
            )
        frame = pd.DataFrame.from_records(
            rows, columns=[*LISTED, "lower_bounds", "damaged"], coerce_float=True
        )
        # From the rows as read: pandas gives back plain str for Undecodable.
        at = LISTED.index("name"), LISTED.index("params")
        frame["params"] = [self._params(row[at[0]], row[at[1]]) for row in rows]
        frame["lower_bounds"] = [_names(text) for text in frame["lower_bounds"]]
        frame["damaged"] = [
            self._problem(row, problem) for row, problem in zip(rows, frame["damaged"], strict=True)
        ]
        self._numbers(frame, rows)
        # pandas reads a text column's NULLs as NaN once any row has text: None is what they mean.
        text = ["name", "kind", "sweep", "host", "gpu", "damaged"]
        frame[text] = frame[text].astype(object).where(frame[text].notna(), None)
        return frame

    def _numbers(self, frame: pd.DataFrame, rows: list[tuple[Any, ...]]) -> None:
        """The listed numbers as numbers: one a row holds as text or a blob (`created = 'abc'`) is
        shown blank and the row named as damaged, never a traceback in every list of runs."""
        for column in _NUMBERS:
            values = pd.to_numeric(frame[column], errors="coerce")
            wrong = values.isna() & frame[column].notna()
            frame[column] = values
            for at in np.flatnonzero(wrong.to_numpy()):
                name = str(rows[at][LISTED.index("name")])
                problem = self.problems.get(name) or f"its {column} is not a number: listed blank"
                self.problems[name] = frame.at[at, "damaged"] = problem

    def _rows_around_damage(self, sql: str, args: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """The listed rows of a store file with a damaged page, one at a time: a row on the damaged
        page is listed by id alone (its sweep unknown, so not in a sweep's list), the others as they
        are."""
        rows, blank = [], [None] * (len(LISTED) + 1)
        for run_id in run_ids(self.db):
            try:
                row = self.db.execute(sql, (*args, run_id)).fetchone()
            except sqlite3.DatabaseError:
                if not args:
                    rows.append((run_id, _row_name(self.db, run_id), *blank[2:], _ON_DAMAGED_PAGE))
                continue
            if row is not None:
                rows.append(row)
        return rows

    def _problem(self, row: tuple[Any, ...], problem: object) -> str | None:
        """What is wrong with one listed row and what that costs, noted in `problems`: SQL's finding
        (a row `load` refuses), else unreadable parameters, else listed text that is not UTF-8."""
        name = str(row[LISTED.index("name")])
        bad = [
            column
            for column, value in zip(LISTED, row, strict=False)
            if isinstance(value, Undecodable)
        ]
        if problem == _ON_DAMAGED_PAGE:
            problem = f"{problem}: `flopscope recover` copies the other runs into a new store"
        elif isinstance(problem, str) or "name" in bad:
            what = problem if isinstance(problem, str) else "its name is not UTF-8 text"
            problem = f"{what}: `open` and `diff` of it fail; the other runs are intact"
        elif name in self.damaged:
            problem = f"{self.damaged[name]}; listed without parameters"
        elif bad:
            problem = (
                f"its {bad[0]} is not UTF-8 text; shown with U+FFFD in place of the bytes that"
                " are not"
            )
        else:
            return None
        self.problems[name] = problem
        return problem

    def _params(self, name: str, text: object) -> dict[str, Any]:
        try:
            params = json.loads(text)  # type: ignore[arg-type]
            if isinstance(params, dict) and not isinstance(text, Undecodable):
                return params
        except (TypeError, ValueError):
            pass
        self.damaged[str(name)] = (
            "its parameters are not UTF-8 text"
            if isinstance(text, Undecodable)
            else "its parameters are not readable JSON"
        )
        return {}

    @_reading
    def resolve(self, ref: str | int) -> int:
        """A run id from an id or a name."""
        text = str(ref)
        row = self.db.execute("SELECT id FROM runs WHERE name = ?", (text,)).fetchone()
        if row is None and text.isdigit():
            row = self.db.execute("SELECT id FROM runs WHERE id = ?", (int(text),)).fetchone()
        if row is None:
            raise FlopscopeError(
                f"run {text}",
                "no such run in the store",
                f"`flopscope runs` lists them (store: {self.path})",
            )
        return int(row[0])

    @_reading
    def identify(self, ref: str | int) -> tuple[int, str]:
        """A run's id and name from either: what to print for a run typed as `6`, so output names
        the run."""
        run_id = self.resolve(ref)
        return run_id, str(
            self.db.execute("SELECT name FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
        )

    @_reading
    def load(self, ref: str | int) -> Report:
        run_id = self.resolve(ref)
        name, meta_text, blob, params = self.db.execute(
            "SELECT name, meta, kernels, params FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        try:
            stored = _meta(name, meta_text)
            kernels = pd.read_parquet(io.BytesIO(blob))
            missing = [Missing(**m) for m in stored.pop("missing", [])]
            # the list's business: the report's summary says it again
            stored.pop(LOWER_BOUNDS, None)
            meta = ReportMeta.from_dict(stored)
        # JSON, Arrow or a field that changed: any of them means this row is damaged
        except Exception as exc:
            why = (
                str(exc)
                if isinstance(exc, _DamagedRow)
                else (
                    f"{type(exc).__name__}:"
                    f" {str(exc).splitlines()[0][:120] if str(exc) else 'unreadable'}"
                )
            )
            raise FlopscopeError(
                f"run {name}",
                f"its stored data is damaged ({why})",
                "the other runs are intact; profile it again (its run folder, if kept, "
                "opens with `flopscope open FOLDER/report.ncu-rep`)",
            ) from None
        # The values a sweep stored the run with (`batch_size`), beside the command and host the
        # report had, and the name it is stored under: a sweep point's file or folder name may
        # differ (`name-1`, an import).
        meta = replace(meta, params={**meta.params, **self._params(name, params)}, run=str(name))
        return Report(
            meta=meta, kernels=kernels, gpu=find_gpu(meta.gpu_database_key), missing=missing
        )

    @_reading
    def named_params(self, ref: str | int) -> tuple[str, dict[str, Any]]:
        """A run's name and the parameters it was stored with (a sweep point's values), by id or
        name."""
        run_id = self.resolve(ref)
        name, text = self.db.execute(
            "SELECT name, params FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        params = self._params(name, text)
        if name in self.damaged:
            raise FlopscopeError(
                f"run {name}",
                f"its stored data is damaged ({self.damaged[name]})",
                "the other runs are intact; profile it again",
            )
        return str(name), params

    @_reading
    def is_sweep(self, name: str) -> bool:
        """A sweep of this name has runs stored, or was reserved by one under way (`new_sweep`)."""
        return (
            self.db.execute(
                "SELECT 1 FROM runs WHERE sweep = ? UNION ALL SELECT 1 FROM sweeps WHERE name = ?",
                (name, name),
            ).fetchone()
            is not None
        )

    @_reading
    def is_run(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM runs WHERE name = ?", (name,)).fetchone() is not None

    def check_names_apart(
        self, run: str | None, sweep: str | None, given_run: str, given_sweep: str
    ) -> None:
        """Refuse a new run named as a stored sweep, or a new sweep named as a stored run: `open
        NAME` looks for a sweep first while `diff NAME` takes the run, so the two commands would
        show different things. `given_*`: what the user typed, to name in the message (`--name
        bs`)."""
        if run and self.is_sweep(run):
            raise FlopscopeError(
                given_run,
                f"a sweep named {run} is stored: `open {run}` would show the sweep, `diff {run}`"
                " this run",
                f"pick another name, e.g. --name {run}-run (`flopscope runs` lists the names"
                " taken)",
            )
        if sweep and self.is_run(sweep):
            raise FlopscopeError(
                given_sweep,
                f"a run named {sweep} is stored: `open {sweep}` would show this sweep, `diff"
                f" {sweep}` that run",
                f"pick another name, e.g. --sweep-name {sweep}-sweep (`flopscope runs` lists the"
                " names taken)",
            )

    @_reading
    def find(self, sweep: str, params: dict[str, Any]) -> int | None:
        row = self.db.execute(
            "SELECT id FROM runs WHERE sweep = ? AND params = ?",
            (sweep, json.dumps(params, sort_keys=True)),
        ).fetchone()
        return None if row is None else int(row[0])

    def _free_name(self, base: str) -> str:
        return _first_free(
            base,
            {
                r[0]
                for r in self.db.execute(
                    "SELECT name FROM runs WHERE name = ? OR name LIKE ? ESCAPE '\\'",
                    (base, _like_prefix(base) + "-%"),
                )
            },
        )

    def new_sweep(self, base: str) -> str:
        """Reserve a sweep name no stored run or earlier sweep uses: `base`, else `base-N`. Two
        sweeps started in the same second get different names instead of merging; a run's name is
        skipped too (see `check_names_apart`)."""
        try:
            with self._transaction():
                taken = {
                    r[0]
                    for r in self.db.execute(
                        "SELECT sweep FROM runs WHERE sweep = ? OR sweep LIKE ? ESCAPE '\\' UNION "
                        "SELECT name FROM sweeps WHERE name = ? OR name LIKE ? ESCAPE '\\' UNION "
                        "SELECT name FROM runs WHERE name = ? OR name LIKE ? ESCAPE '\\'",
                        (base, _like_prefix(base) + "-%") * 3,
                    )
                }
                name = _first_free(base, taken)
                self.db.execute(
                    "INSERT INTO sweeps (name, created) VALUES (?, ?)", (name, time.time())
                )
        except sqlite3.Error as exc:
            raise store_error(self.path, exc, "cannot write the run store") from None
        return name


class _DamagedRow(ValueError):
    """What is wrong with a row, said as is (not as the type of a parser's exception)."""


def _meta(name: str, text: object) -> dict[str, Any]:
    """A row's meta, or _DamagedRow: it is kept as a JSON object of UTF-8 text."""
    for column, value in (("name", name), ("meta", text)):
        if isinstance(value, Undecodable):
            raise _DamagedRow(f"its {column} is not UTF-8 text")
    meta = json.loads(text)  # type: ignore[arg-type]
    if not isinstance(meta, dict):
        raise _DamagedRow("its meta is not a JSON object")
    return meta


def run_ids(db: sqlite3.Connection) -> list[int]:
    """Every run id a store file with a damaged page may hold: those a scan reads, and every id up
    to the highest ever given (AUTOINCREMENT's record), for the rows past a damaged page of the
    scan."""
    ids: set[int] = set()
    with contextlib.suppress(sqlite3.Error):
        for (run_id,) in db.execute("SELECT id FROM runs ORDER BY id"):
            ids.add(int(run_id))
    with contextlib.suppress(sqlite3.Error):
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'runs'").fetchone()
        ids.update(range(1, int(row[0]) + 1) if row else ())
    return sorted(ids)


def _row_name(db: sqlite3.Connection, run_id: int) -> str:
    """A run's name if its row still says it (the damage may be elsewhere in it), else `#ID`."""
    try:
        row = db.execute("SELECT name FROM runs WHERE id = ?", (run_id,)).fetchone()
    except sqlite3.Error:
        row = None
    return str(row[0]) if row else f"#{run_id}"


def _first_free(base: str, taken: set[str]) -> str:
    """`base`, else the first `base-N` not taken."""
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def _names(text: object) -> list[str]:
    """A JSON list of names read back from a row, [] where there is none (runs stored before it was
    kept)."""
    try:
        names = json.loads(text) if isinstance(text, str) else []
    except ValueError:
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


def _like_prefix(text: str) -> str:
    """`text` for a LIKE pattern: its own % and _ match only themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _row(
    report: Report,
    kind: str,
    sweep: str | None,
    params: dict[str, Any] | None,
    host: str | None,
    command: list[str] | None,
    created: float | None = None,
) -> tuple[object, ...]:
    """Every column of a run but its name."""
    blob = io.BytesIO()
    arrow_safe(report.kernels).to_parquet(blob, index=False)
    summary = report.summary()
    # The list shows the known part of a total some launch lacks (one ncu did not profile, a FLOP
    # counter not collected) and names it a lower bound, as the run's own header does.
    listed = {name: summary.known(name) for name in KNOWN_PART}
    lower = [name for name, (_, lower_bound) in listed.items() if lower_bound]
    # Not the name a loaded run had: the row's own name column is the one `load` gives.
    meta = {
        **replace(report.meta, run=None).to_dict(m.__dict__ for m in report.missing),
        LOWER_BOUNDS: lower,
    }
    return (
        time.time() if created is None else created,
        kind,
        sweep,
        json.dumps(params or {}, sort_keys=True),
        host,
        json.dumps(command) if command else None,
        report.gpu_label,
        len(report.kernels),
        *(None if math.isnan(v) else v for v, _ in listed.values()),
        json.dumps(meta, default=str),
        blob.getvalue(),
    )


def newest_first(runs: pd.DataFrame) -> pd.DataFrame:
    """`Store.runs()` in the one order every list of runs shows (`runs`, its `--json`, the Runs
    screen): newest first by when each run was captured, which an imported run keeps, so the store's
    id order is not time order; the later stored first at equal times, a run whose time cannot be
    read last."""
    return runs.sort_values(["created", "id"], ascending=False, na_position="last").reset_index(
        drop=True
    )
