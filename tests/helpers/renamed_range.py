"""The H100 training step's raw page with its `attn` module's ranges renamed to a name holding both
separators of the joined NVTX label (`/` and `:`), as a program may push it: forward (pushed) and
backward (started)."""

from __future__ import annotations

import gzip
from pathlib import Path

from .two_gpu_capture import SOURCE

RENAMED = "attn/qkv:proj"


def source_text() -> str:
    with gzip.open(SOURCE, "rt", newline="") as f:
        return f.read()


def renamed_page(folder: Path) -> Path:
    text = source_text().replace("<default domain>:attn:", f"<default domain>:{RENAMED}:")
    text = text.replace("<default domain>:backward/attn:", f"<default domain>:backward/{RENAMED}:")
    page = folder / "renamed.csv"
    page.write_text(text, newline="")
    return page
