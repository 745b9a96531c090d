"""The user's `config.toml` in flopscope's home: `[keymap]` (keymap.py) and `[columns]` (column_choice.py)."""

from __future__ import annotations

from pathlib import Path

from ...core.common import home_folder

CONFIG_FILE = "config.toml"


def config_path() -> Path:
    """`config.toml` in flopscope's home (FLOPSCOPE_HOME, else the user's data folder)."""
    return home_folder() / CONFIG_FILE
