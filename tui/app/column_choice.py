"""The columns a person chose for a table (the column chooser, `C`), kept in `config.toml` beside
the keymap (keymap.py), one list of column keys per table, in the order shown after the name:

    [columns]
    kernels = ["duration_s", "pct_time", "pct_of_roof", "roof", "registers"]
    runs = ["total_time_s", "gpu", "params_text"]

The file is the person's: writing a choice rewrites only the `[columns]` table, keeping every other
line (the keymap, comments) as it was, and replaces the file whole (temporary file, then rename).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ...core import FlopscopeError
from ...core.table import ALL
from ..presentation.reconcile_table import reconcile_columns
from .config_file import config_path, read_section
from .screens.table_columns import diff_columns, run_columns

SECTION = "columns"
# every column of the canonical table: what the Kernels screen offers
KNOWN = {name for name, _, _ in ALL}


def known_keys(table: str) -> set[str]:
    """The columns `table` can show: the Runs, Diff and Reconcile tables their own (every grouping's
    and layout's), any other the canonical table's."""
    if table == "runs":
        return {c.name for c in run_columns()}
    if table == "diff":
        return {c.name for by in ("name", "nvtx", "module") for c in diff_columns(by, gpus=True)}
    if table == "reconcile":
        return {c.name for c in reconcile_columns(train=True)}
    return KNOWN


def load_columns(path: Path | None = None) -> dict[str, list[str]]:
    """Each table's chosen column keys (a table not named: its own columns). A file that is not
    TOML, or a choice that is no list of known column keys, is one FlopscopeError line naming the
    fix (the CLI exits 2)."""
    return _read(path or config_path())


def save_columns(table: str, keys: list[str] | None, path: Path | None = None) -> Path:
    """Keep `keys` as `table`'s choice (None: forget it, back to the table's own); returns the file
    written."""
    path = path or config_path()
    chosen = _read(path)
    if keys is None:
        chosen.pop(table, None)
    else:
        chosen[table] = list(keys)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    kept = _without_section(text)
    lines = [f"{name} = {json.dumps(value)}" for name, value in sorted(chosen.items())]
    section = f"[{SECTION}]\n" + "".join(f"{line}\n" for line in lines) if lines else ""
    _write(path, kept + ("\n" if kept and section else "") + section)
    return path


def _read(path: Path) -> dict[str, list[str]]:
    chosen = read_section(path, SECTION, 'kernels = ["..."]')
    for table, keys in chosen.items():
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise FlopscopeError(
                path,
                f"[{SECTION}] {table} is not a list of column keys",
                'write ["duration_s", ...]',
            )
        known = known_keys(table)
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise FlopscopeError(
                path,
                f"[{SECTION}] {table} names no column {unknown[0]!r}",
                "use --json keys, or remove the line",
            )
    return chosen


def _without_section(text: str) -> str:
    """`text` less its `[columns]` table (its header and the lines up to the next table)."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        header = line.strip()
        if header.startswith("[") and not header.startswith("[["):
            inside = header.split("#")[0].strip() == f"[{SECTION}]"
        if not inside:
            out.append(line)
    kept = "".join(out).rstrip("\n")
    return kept + "\n" if kept else ""


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a crash mid-write never leaves the keymap half written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
