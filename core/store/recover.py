"""`flopscope recover`: the runs on the intact pages of a damaged store file, copied into a new
store that takes its place, with the sweep names and the ceilings measured on nodes (`flopscope
ceilings`) that can be read. The damaged file is never changed or deleted: it is renamed, with its
-wal and -shm, beside the new one. (`sqlite3 .recover` would do more, but many builds of the sqlite3
tool lack it, Debian's among them.)"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..common.errors import FlopscopeError
from . import ceilings
from .run_store import Store, quick_check, run_ids, store_error

_COLUMNS = (
    "id",
    "name",
    "created",
    "kind",
    "sweep",
    "params",
    "host",
    "command",
    "gpu",
    "launches",
    "total_time_s",
    "total_flop",
    "meta",
    "kernels",
)
# copied as the bytes they hold
_TEXT = {"name", "kind", "sweep", "params", "host", "command", "gpu", "meta"}


@dataclass
class Recovered:
    kept: list[str] = field(default_factory=list)  # names of the runs copied
    # `name (id N)` of the runs whose row could not be read
    lost: list[str] = field(default_factory=list)
    damaged: Path | None = None  # where the damaged file now is


def recover_store(path: Path) -> Recovered:
    """Copy every readable run of the damaged store at `path` into a new store file, then move the
    damaged file aside (renamed) and the new one into its place. Refused for a store SQLite finds no
    damage in."""
    found = quick_check(path)
    if not found:
        raise FlopscopeError(
            path,
            "SQLite finds no damage in this run store (PRAGMA quick_check: ok)",
            "nothing to recover; `flopscope runs` lists its runs",
        )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    fresh = path.with_name(f"{path.name}.recovering-{stamp}")
    result = Recovered()
    try:
        # not even a checkpoint into it
        old = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        old.text_factory = bytes  # text copied byte for byte, even where it is not UTF-8
    except sqlite3.Error as exc:
        raise store_error(path, exc, "cannot open the damaged run store") from None
    try:
        with Store(fresh) as new:
            new.db.execute("BEGIN IMMEDIATE")
            _copy_runs(old, new, result)
            if not result.kept:  # a new empty store in its place would help nobody
                raise FlopscopeError(
                    path,
                    f"no run in this damaged store could be read ({found})",
                    "it is left as it is; restore it from a backup, or move it aside to start a new"
                    " store",
                )
            _copy_sweeps(old, new)
            _copy_ceilings(old, new)
            new.db.execute("COMMIT")
    except BaseException:
        _remove(fresh)
        raise
    finally:
        old.close()
    result.damaged = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):  # a WAL belongs to its database file: they move together
        if Path(f"{path}{suffix}").exists():
            os.replace(f"{path}{suffix}", f"{result.damaged}{suffix}")
    os.replace(fresh, path)
    return result


def _remove(store: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)


def _copy_runs(old: sqlite3.Connection, new: Store, result: Recovered) -> None:
    select = f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE id = ?"
    values = ", ".join("CAST(? AS TEXT)" if c in _TEXT else "?" for c in _COLUMNS)
    insert = f"INSERT INTO runs ({', '.join(_COLUMNS)}) VALUES ({values})"
    for run_id in run_ids(old):
        try:
            row = old.execute(select, (run_id,)).fetchone()
        except sqlite3.Error:
            name = _name(old, run_id)
            result.lost.append(f"{name} (id {run_id})" if name else f"id {run_id}")
            continue
        if row is not None:  # None: an id given once and deleted since
            new.db.execute(insert, row)
            result.kept.append(row[1].decode(errors="replace"))


def _name(old: sqlite3.Connection, run_id: int) -> str | None:
    """A lost run's name, if its row still says it (the damage may be in its kernels only)."""
    try:
        row = old.execute("SELECT name FROM runs WHERE id = ?", (run_id,)).fetchone()
    except sqlite3.Error:
        return None
    return row[0].decode(errors="replace") if row else None


def _copy_sweeps(old: sqlite3.Connection, new: Store) -> None:
    """Reserved sweep names, so a later sweep does not take one a stored run belongs to; best
    effort."""
    try:
        rows = old.execute("SELECT name, created FROM sweeps").fetchall()
    except sqlite3.Error:
        return
    new.db.executemany("INSERT OR IGNORE INTO sweeps (name, created) VALUES (?, ?)", rows)


def _copy_ceilings(old: sqlite3.Connection, new: Store) -> None:
    """The ceilings measured on nodes (a few rows, each costly to measure again: it needs the GPU),
    row by row so a damaged row costs only itself; a store from before `flopscope ceilings` has
    none."""
    try:
        rowids = [r[0] for r in old.execute("SELECT rowid FROM ceilings").fetchall()]
    except sqlite3.Error:
        return
    new.db.execute(ceilings.SCHEMA)
    for rowid in rowids:
        try:
            row = old.execute(
                "SELECT host, gpu, driver, measured, doc FROM ceilings WHERE rowid = ?", (rowid,)
            ).fetchone()
        except sqlite3.Error:
            continue
        if row is not None:
            new.db.execute(
                "INSERT OR IGNORE INTO ceilings VALUES (CAST(? AS TEXT), CAST(? AS TEXT), "
                "CAST(? AS TEXT), ?, CAST(? AS TEXT))",
                row,
            )
