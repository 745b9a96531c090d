"""The user's `config.toml` in flopscope's home: `[keymap]` (keymap.py) and `[columns]`
(column_choice.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core import FlopscopeError
from ...core.common import home_folder

CONFIG_FILE = "config.toml"


def config_path() -> Path:
    """`config.toml` in flopscope's home (FLOPSCOPE_HOME, else the user's data folder)."""
    return home_folder() / CONFIG_FILE


def read_section(path: Path, section: str, example: str) -> dict[str, Any]:
    """The `[section]` table of the TOML file `path`; {} when there is no such file. A file that
    cannot be read, is not TOML, or holds `section` as no table is one FlopscopeError line
    (`example`: how to write it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise FlopscopeError(path, f"cannot read it ({exc})", "fix or remove the file") from None
    import tomllib  # here: without a config file, the app's start does without it (~10 ms)

    try:
        table = tomllib.loads(text).get(section, {})
    except tomllib.TOMLDecodeError as exc:
        raise FlopscopeError(
            path, f"not TOML ({exc})", "fix the line named, or remove the file"
        ) from None
    if not isinstance(table, dict):
        raise FlopscopeError(
            path, f"`{section}` is not a table", f"write it as [{section}] then {example}"
        )
    return table
