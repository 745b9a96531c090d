"""Which of ncu's launch filters a profile ran with, from the `ncu_argv` its run folder's `run.json`
records (beside report.ncu-rep): a step whose launches ncu profiled only in part (`-c N`,
`--launch-skip N`, `-k REGEX`) has a short kernel time that is no idle GPU.

run.json may come back from another host, so it is read as untrusted: anything but a list of
strings under `ncu_argv` is no argv (None), never an error: the steps print without the filters'
names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeGuard

RUN_JSON = "run.json"
MAX_BYTES = 4 * 1024 * 1024
# Options that pick some kernels of every step: each step's launches are a part of it.
PICKING = ("-k", "--kernel-name", "--kernel-id", "--nvtx-include", "--nvtx-exclude")
# Options that cut the profiled launches at an edge: the steps at the cut are partial.
CUTTING = ("-c", "--launch-count", "-s", "--launch-skip", "--launch-skip-before-match")


def profile_filters(report_source: str | Path) -> tuple[list[str], list[str]] | None:
    """The picking and the cutting filters (each `option value`) of the profile whose report is
    `report_source`; None where there is no readable run.json beside it."""
    path = Path(report_source).parent / RUN_JSON
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        argv, command = doc.get("ncu_argv"), doc.get("command")
    except (OSError, ValueError, AttributeError):
        return None
    if not _strings(argv):
        return None
    if _strings(command) and command and argv[-len(command) :] == command:
        argv = argv[: -len(command)]  # the program's own arguments are not ncu's (`train.py -c 5`)
    return _given(argv, PICKING), _given(argv, CUTTING)


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _given(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """`option value` for each of `options` in argv (`--opt=value` too)."""
    out = []
    for n, word in enumerate(argv):
        name, eq, value = word.partition("=")
        if name in options:
            given = value if eq else (argv[n + 1] if n + 1 < len(argv) else "")
            out.append(f"{name} {given}".strip())
    return out
