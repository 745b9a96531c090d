"""`profile --modules`' timing run: the program once more, without ncu, its step wall times written
by the injected hooks (module_ranges.py, told by FLOPSCOPE_STEP_TIMES) and brought back as the run's
timing file.

Under ncu each kernel is replayed and measured alone, so the profiled run's wall time says nothing
of the program's own; this run's does. Each step is timed from one `optimizer.step()` to the next,
the GPU synchronised at both ends, so a step's wall time holds its kernels, launch overhead, host
work and data loading."""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from ..common.disk import write_error
from ..common.errors import FlopscopeError
from ..ncu.command import TIMING_LIMIT_S
from ..ncu.progress import Event
from ..store.step_times import TIMING_FILE, read_step_times
from .module_ranges import TIMES_ENV
from .transport import RunningJob, Transport


def timing_run(
    transport: Transport,
    command: list[str],
    workdir: str,
    run_dir: Path,
    env: dict[str, str],
    cwd: str | None,
    on_process: Callable[[RunningJob], None] = lambda p: None,
    on_event: Callable[[Event], None] = lambda e: None,
    limit_s: float = TIMING_LIMIT_S,
) -> str:
    """Run `command` with the hooks' `env` (their PYTHONPATH) and the timing file's path; its output
    goes to run_dir/timing.log. Stopped after `limit_s` seconds (--timing-limit): the profile's
    report is already back and is kept. The line that says what came of it (the run is kept
    whatever it says)."""
    remote = f"{workdir}/{TIMING_FILE}"
    on_event(
        Event(
            "prof",
            "timing run: the program once more, without ncu, each step timed (--no-timing"
            " skips it)",
        )
    )
    job = transport.popen(command, cwd, {**env, TIMES_ENV: remote})
    on_process(job)  # a stop reaches this run as it does ncu's
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        job.terminate()

    timer = threading.Timer(limit_s, expire)
    timer.daemon = True
    timer.start()
    log_path = run_dir / "timing.log"
    try:
        with log_path.open("w") as log:
            for line in job.stdout:
                log.write(line)
    except BaseException as exc:
        timer.cancel()
        job.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            job.wait(timeout=10)
        if isinstance(exc, OSError):
            raise write_error(
                log_path, exc, "cannot write the timing run's output (the run was stopped)"
            ) from None
        raise
    code = job.wait()
    timer.cancel()
    if expired.is_set():
        return (
            f"timing run: stopped at its time limit, {limit_s:g} s (--timing-limit SECONDS raises"
            " it), so no step times; the ncu profile is kept (timing.log has the program's output)"
        )
    local = run_dir / TIMING_FILE
    if not transport.fetch(remote, local):
        return (
            f"timing run: no step times (the program exited with code {code}; timing.log has its"
            " output)"
        )
    return _said(local, code)


def _said(local: Path, code: int) -> str:
    try:
        times = read_step_times(local)
    except FlopscopeError as err:
        local.unlink(missing_ok=True)  # a file the report would refuse: the run is kept without it
        return f"timing run: step times not kept ({err.line()})"
    walls = list(times.wall_s.values()) if times else []
    exited = f"; the program exited with code {code}" if code else ""
    if not walls:
        return f"timing run: no whole step (no optimizer.step() after a module call){exited}"
    kept = walls[1:] or walls  # the first step warms up (allocator, autotuning, compilation)
    return (
        f"timing run without ncu: {len(walls)} step(s), median wall {statistics.median(kept):.4g}"
        f" s{' after the first' if len(walls) > 1 else ''} (`report --by module` shows MFU and idle"
        f" time){exited}"
    )
