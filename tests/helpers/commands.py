"""The flopscope command run with a clean environment (`run`), as the CLI tests run it."""

from __future__ import annotations

from functools import partial

from .cli import run_cli

run = partial(run_cli, clean_env=True)
