"""The table filters given (`/`), kept across restarts in `filter_history.json` in flopscope's home,
so that `up` in a new app's filter prompt recalls yesterday's `time > 5us and bound == dram`.

The file is read as untrusted: only strings are taken, none holding a control character (an Input
never holds one: a line edited in by hand could carry terminal codes), each at most MAX_CHARS long,
the newest MAX_ENTRIES. A file that cannot be read or is not such a list is no history (the next
filter given writes a good one): losing a recall list is no reason to refuse to start. Written whole
or not at all (temporary file, then rename); two apps open at once: the last to take a filter writes
the file."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from ...core.common import home_folder

HISTORY_FILE = "filter_history.json"
MAX_ENTRIES = 50  # what `up` walks back through; the prompt keeps as many
MAX_CHARS = 1000  # longer than any expression typed; a bigger entry was not typed
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def history_path() -> Path:
    return home_folder() / HISTORY_FILE


class FilterHistory:
    """`entries`, oldest first: the list the filter prompt recalls from and adds to; `save()` keeps
    it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries = read_history(path)

    def save(self) -> None:
        """Write the entries (OSError where the folder cannot take the file)."""
        write_history(self.path, self.entries)


def read_history(path: Path) -> list[str]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    if not isinstance(loaded, list):
        return []
    kept = [
        e
        for e in loaded
        if isinstance(e, str) and e.strip() and len(e) <= MAX_CHARS and not _CONTROL.search(e)
    ]
    return list(dict.fromkeys(reversed(kept)))[:MAX_ENTRIES][::-1]  # each once, at its newest place


def write_history(path: Path, entries: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".filters-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(entries[-MAX_ENTRIES:], f, ensure_ascii=False, indent=0)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
