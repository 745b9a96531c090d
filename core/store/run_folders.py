"""Where runs live: `$FLOPSCOPE_HOME`, else the user's data directory."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from ..common.errors import FlopscopeError
from ..common.home import data_home, ensure_folder, folder_error


def folder_name(name: str) -> str:
    """A name flopscope makes (a default name from the program, a sweep point's parameter values) as
    its run folder, and so the stored run, gets it: what a path would trip on becomes `_`. Names
    typed by the user are checked by check_run_name instead, never changed."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", name).strip("._") or "run"


_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=-]*")
# a folder name may be 255 bytes; room is left for `-N` and a sweep point's `-param=value`
MAX_NAME = 200


def check_run_name(name: str, given: str, option: str = "--name", example: str = "run") -> None:
    """The one rule for a run or sweep name the user gives (`--name`, `--sweep-name`, an imported
    folder's name): stored as typed, as its run folder's name, or refused with one line. So letters,
    digits and `. _ = -` (not first), at most MAX_NAME of them; not digits only, since `open 2`,
    `diff 2 3` and `sweep --from 2` read digits as the run id `flopscope runs` shows. `given`: what
    the user typed, to name in the message (`--name 2`); `option` and `example`: the fix (`--name
    run2`)."""
    if not name:
        raise FlopscopeError(
            f"{option} ''",
            "an empty name",
            f"leave {option} out for the default name, or pass one: {option} {example}1",
        )
    if len(name) > MAX_NAME:
        raise FlopscopeError(
            given if len(given) <= 60 else given[:40] + "...",
            f"a name of {len(name)} characters is too long for its run folder",
            f"pass a shorter {option} (at most {MAX_NAME} characters)",
        )
    if not _RUN_NAME.fullmatch(name):
        raise FlopscopeError(
            given,
            "a name is stored as typed, and so takes only letters, digits and . _ = - (not first)",
            f"e.g. {option} {_storable(name, example)}",
        )
    if name.isdigit():
        raise FlopscopeError(
            given,
            f"a name of digits only ({name}) would be taken for a run id by `open`, `diff` and"
            " `sweep --from`",
            f"add a letter: {option} {example}{name}",
        )


def _storable(name: str, example: str) -> str:
    """A name close to `name` that check_run_name takes, to suggest."""
    close = folder_name(name).lstrip("-=")[:MAX_NAME] or example
    return example + close if close.isdigit() else close


def new_run_dir(name: str | None, command: list[str]) -> Path:
    """A fresh folder for one profile, named `name` (checked by check_run_name or made by
    folder_name), else after the time and the program's name. Always a new folder directly in the
    store's `runs` folder: a name with a `/` or `..` (`../../x`, `/etc/x`) is refused, never
    followed, whoever calls this."""
    if name is not None and not _RUN_NAME.fullmatch(name):
        raise FlopscopeError(
            name,
            "a run name is one folder name: letters, digits and . _ = - (not first)",
            "pass a name such as run1",
        )
    base = name or folder_name(
        f"{time.strftime('%Y%m%d-%H%M%S')}-{Path(command[0]).name if command else 'run'}"
    )
    runs = runs_folder()
    for n in range(1000):
        path = runs / (base if n == 0 else f"{base}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise folder_error(path, exc) from None
    raise FlopscopeError(
        runs / base, "1000 run folders of this name already exist", "pass another --name"
    )


def runs_folder() -> Path:
    """The store's `runs` folder, created if need be. A symbolic link there is refused: run folders,
    and what ncu writes into them, stay inside the data folder (point FLOPSCOPE_HOME elsewhere to
    move them)."""
    runs = data_home() / "runs"
    if runs.is_symlink():
        raise FlopscopeError(
            runs,
            f"is a symbolic link (to {os.readlink(runs)}); flopscope writes run folders only inside"
            " its data folder",
            "remove the link, or set FLOPSCOPE_HOME to the folder it points to",
        )
    ensure_folder(runs)
    return runs


def discard_unfinished(run_dir: Path) -> bool:
    """Remove a run folder that holds no report (a stopped profile): its name is free again. True if
    removed."""
    if (run_dir / "report.ncu-rep").exists():
        return False
    shutil.rmtree(run_dir, ignore_errors=True)
    return not run_dir.exists()
