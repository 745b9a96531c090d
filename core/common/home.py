"""flopscope's data home: `$FLOPSCOPE_HOME`, else the user's data directory; the run store, the
table cache and the config live there."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from platformdirs import user_data_dir

from .disk import write_error
from .errors import FlopscopeError

# Both caches in the data home (readers/table_cache.py, tui/cli/output_cache.py) are off where this
# is set to anything but "" or "0" (the CLI's --no-cache).
NO_CACHE_ENV = "FLOPSCOPE_NO_CACHE"


def caches_enabled() -> bool:
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


def home_folder() -> Path:
    """`$FLOPSCOPE_HOME`, else the user's data directory; not created (`data_home` creates it)."""
    home = os.environ.get("FLOPSCOPE_HOME")
    return Path(home) if home else Path(user_data_dir("flopscope"))


def data_home() -> Path:
    path = home_folder()
    ensure_folder(path)
    return path


def ensure_folder(path: Path) -> None:
    """`mkdir -p`, or one line naming the folder and the fix: a file in the way, a read-only or full
    disk."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise folder_error(path, exc) from None


def folder_error(path: Path, exc: OSError) -> FlopscopeError:
    where = f"{path} (FLOPSCOPE_HOME)" if os.environ.get("FLOPSCOPE_HOME") else str(path)
    fix = "set FLOPSCOPE_HOME to a writable folder"
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return FlopscopeError(where, "a file is in the way: the run store needs a folder here", fix)
    if exc.errno == errno.EROFS:
        return FlopscopeError(where, "cannot write here: read-only file system", fix)
    # not FLOPSCOPE_HOME's fault: the run's name (a long sweep point's)
    if exc.errno == errno.ENAMETOOLONG:
        return FlopscopeError(
            path.name[:40] + "...",
            "a run name too long for its folder",
            "pass a shorter --name or --sweep-name, or shorter parameter values",
        )
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return write_error(where, exc, "cannot write here")
    return FlopscopeError(where, f"cannot create it ({exc.strerror or exc})", fix)
