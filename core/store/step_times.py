"""A run's timing file (`timing.json` in its run folder, beside report.ncu-rep): each training
step's wall time from `profile --modules`' timing run, the program run once more without ncu
(core/profiling/timing_run.py).

The hooks inside the program (core/profiling/module_ranges.py) write it as `{"steps": [{"step": N,
"wall_s": S}, ...]}`; it comes back from the GPU host, so it is read as untrusted: anything but
whole steps numbered from 1 with finite, non-negative seconds is refused with one line naming the
file."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import FlopscopeError, path_error

TIMING_FILE = "timing.json"
MAX_BYTES = 16 * 1024 * 1024  # about 200,000 steps: more is no file the hooks wrote
_FIX = "profile again with --modules, or delete the file to see the report without step times"


@dataclass(frozen=True)
class StepTimes:
    path: Path
    wall_s: dict[int, float]  # step number -> its wall seconds, in step order


def timing_path(report_source: str | Path) -> Path:
    """Where a report's timing file lives: beside the report (a stored run's report.ncu-rep is in
    its folder)."""
    return Path(report_source).parent / TIMING_FILE


def read_step_times(path: Path) -> StepTimes | None:
    """The step times in `path`; None when there is no such file (a run profiled without a timing
    run)."""
    try:
        if not path.is_file() and path.exists():  # a FIFO or a folder would block or fail the read
            raise FlopscopeError(path, "not a regular file", _FIX)
        if path.stat().st_size > MAX_BYTES:
            raise FlopscopeError(path, f"a timing file over {MAX_BYTES // 2**20} MiB", _FIX)
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise path_error(path, exc) from None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise FlopscopeError(path, "not a JSON timing file", _FIX) from None
    return StepTimes(path, _steps(path, doc))


def _steps(path: Path, doc: object) -> dict[int, float]:
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if not isinstance(steps, list):
        raise FlopscopeError(path, 'no "steps" list in the timing file', _FIX)
    out: dict[int, float] = {}
    for entry in steps:
        step = entry.get("step") if isinstance(entry, dict) else None
        wall = entry.get("wall_s") if isinstance(entry, dict) else None
        if not (
            isinstance(step, int) and not isinstance(step, bool) and step >= 1 and step not in out
        ):
            raise FlopscopeError(
                path, f"a step that is no new step number from 1: {_short(entry)}", _FIX
            )
        if not (
            isinstance(wall, int | float)
            and not isinstance(wall, bool)
            and math.isfinite(wall)
            and wall >= 0
        ):
            raise FlopscopeError(
                path, f"step {step}'s wall_s is no number of seconds: {_short(wall)}", _FIX
            )
        out[step] = float(wall)
    return dict(sorted(out.items()))


def _short(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
