"""The flopscope command with a sweep's longer timeout."""

from __future__ import annotations

from functools import partial

from .cli import run_cli

cli = partial(run_cli, timeout=300)
