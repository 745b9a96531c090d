"""The run store: one SQLite file in the data directory holding every run (meta + kernels).

Kernels are kept as a Parquet blob per run (a 100k-launch table stores and loads in well under a second);
each run is written in one transaction, so a process killed mid-write leaves earlier runs intact and the
half-written one absent.
"""

from __future__ import annotations

import io
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from .counters import Missing
from .errors import FlopscopeError
from .export import arrow_safe
from .gpus import find_gpu
from .report import Report
from .runs import data_home

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
"""
LISTED = ["id", "name", "created", "kind", "sweep", "params", "host", "gpu", "launches", "total_time_s", "total_flop"]


class Store:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else data_home() / "flopscope.db"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise FlopscopeError(self.path, f"the run store is not a usable database ({exc})",
                                 "move it aside; set FLOPSCOPE_HOME to use another folder") from None

    def close(self) -> None:
        self.db.close()

    def save(self, report: Report, name: str, *, kind: str = "profile", sweep: str | None = None,
             params: dict | None = None, host: str | None = None, command: list[str] | None = None) -> int:
        """Store one run in a single transaction; returns its id."""
        blob = io.BytesIO()
        arrow_safe(report.kernels).to_parquet(blob, index=False)
        summary = report.summary()
        meta = {**report.meta, "missing": [m.__dict__ for m in report.missing]}
        row = (name, time.time(), kind, sweep, json.dumps(params or {}, sort_keys=True), host,
               json.dumps(command) if command else None, report.meta.get("gpu"), len(report.kernels),
               summary.total_time_s, None if summary.total_flop != summary.total_flop else summary.total_flop,
               json.dumps(meta, default=str), blob.getvalue())
        with self._transaction():
            cur = self.db.execute(
                "INSERT INTO runs (name, created, kind, sweep, params, host, command, gpu, launches, total_time_s,"
                " total_flop, meta, kernels) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
        return int(cur.lastrowid)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: a run is stored whole or not at all."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def runs(self, sweep: str | None = None) -> pd.DataFrame:
        sql = f"SELECT {', '.join(LISTED)} FROM runs"
        args: tuple = ()
        if sweep is not None:
            sql += " WHERE sweep = ?"
            args = (sweep,)
        frame = pd.read_sql_query(sql + " ORDER BY id", self.db, params=args)
        frame["params"] = frame["params"].map(json.loads)
        # pandas reads a text column's NULLs as NaN once any row has text: None is what they mean.
        text = ["name", "kind", "sweep", "host", "gpu"]
        frame[text] = frame[text].astype(object).where(frame[text].notna(), None)
        return frame

    def resolve(self, ref: str | int) -> int:
        """A run id from an id or a name."""
        text = str(ref)
        row = self.db.execute("SELECT id FROM runs WHERE name = ?", (text,)).fetchone()
        if row is None and text.isdigit():
            row = self.db.execute("SELECT id FROM runs WHERE id = ?", (int(text),)).fetchone()
        if row is None:
            raise FlopscopeError(f"run {text}", "no such run in the store",
                                 f"`flopscope runs` lists them (store: {self.path})")
        return int(row[0])

    def load(self, ref: str | int) -> Report:
        run_id = self.resolve(ref)
        meta_text, blob = self.db.execute("SELECT meta, kernels FROM runs WHERE id = ?", (run_id,)).fetchone()
        meta = json.loads(meta_text)
        kernels = pd.read_parquet(io.BytesIO(blob))
        missing = [Missing(**m) for m in meta.pop("missing", [])]
        meta["missing"] = [{"column": m.column, "launches": m.launches, "problem": m.problem(), "fix": m.fix()}
                           for m in missing]
        gpu = find_gpu(meta.get("gpu_database_key"))
        return Report(meta=meta, kernels=kernels, gpu=gpu, missing=missing)

    def find(self, sweep: str, params: dict) -> int | None:
        row = self.db.execute("SELECT id FROM runs WHERE sweep = ? AND params = ?",
                              (sweep, json.dumps(params, sort_keys=True))).fetchone()
        return None if row is None else int(row[0])

    def unique_name(self, base: str) -> str:
        names = {r[0] for r in self.db.execute("SELECT name FROM runs WHERE name = ? OR name LIKE ?",
                                               (base, base + "-%"))}
        if base not in names:
            return base
        n = 1
        while f"{base}-{n}" in names:
            n += 1
        return f"{base}-{n}"
