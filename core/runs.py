"""Where runs live: `$FLOPSCOPE_HOME`, else the user's data directory."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from platformdirs import user_data_dir


def data_home() -> Path:
    home = os.environ.get("FLOPSCOPE_HOME")
    path = Path(home) if home else Path(user_data_dir("flopscope"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def new_run_dir(name: str | None, command: list[str]) -> Path:
    """A fresh folder for one profile; the name defaults to the time and the program's name."""
    base = name or f"{time.strftime('%Y%m%d-%H%M%S')}-{Path(command[0]).name if command else 'run'}"
    base = re.sub(r"[^A-Za-z0-9._=-]+", "_", base).strip("._") or "run"
    runs = data_home() / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for n in range(1000):
        path = runs / (base if n == 0 else f"{base}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"no free run folder for {base}")
