"""A standalone script of this package (doctor_probe.py, ceilings_bench.py: standard library, torch
for the bench) run on the target as one `python -c`, its last output line read as the JSON it
prints."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from ..common.errors import FlopscopeError
from .transport import Transport


def script_json(
    transport: Transport,
    python: str,
    script: str,
    args: list[str],
    *,
    command: str,
    problem: str,
    fix: str,
) -> Any:
    """What `script` prints last, as JSON; else one line: `COMMAND on HOST: PROBLEM (the target's
    last output line); FIX`."""
    source = files(__package__).joinpath(script).read_text()
    done = transport.output([python, "-c", source, *args])
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = (done.stderr or done.stdout).strip().splitlines()
        why = last[-1] if last else "no output"
        raise FlopscopeError(f"{command} on {transport.host}", f"{problem} ({why})", fix) from None
