"""Flow 3, sweep: a command template x parameter values -> one profile per point, spread over hosts.

`{name}` in an argument is replaced inside that argument only; the result stays one argv element and
never passes through a shell. Every point is stored as a run as soon as it finishes. A host that
goes away is dropped and its point profiled by the hosts left; nothing a point raises stops the
other points, except a store or data folder that cannot be written (every later point would fail the
same way)."""

from __future__ import annotations

import dataclasses
import itertools
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..common.errors import FlopscopeError
from ..ncu.command import ProfileOptions
from ..ncu.progress import Event
from ..store.run_folders import discard_unfinished, folder_name, new_run_dir
from ..store.run_store import Store, StoreError
from .doctor import preflight
from .profiler import profile
from .transport import LocalTransport, RunningJob, Transport, stop_all, stopping

if TYPE_CHECKING:
    from .transport import JobState

# on_state(point, host, state): a point's Slurm job was queued, started or ended
OnState = Callable[[dict[str, str], str, "JobState"], None]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def parse_params(specs: list[str]) -> dict[str, list[str]]:
    """`batch_size=1,8,16` (repeatable) -> {"batch_size": ["1", "8", "16"]}."""
    params: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or not _NAME.match(name) or not values:
            raise FlopscopeError(
                f"--param {spec}", "expected NAME=V1,V2,...", "e.g. --param batch_size=1,8,16"
            )
        # a later --param would replace the earlier values: points silently not profiled
        if name in params:
            raise FlopscopeError(
                f"--param {spec}",
                f"{name} is given by an earlier --param too",
                f"one --param per name, its values comma-separated: --param {name}="
                + ",".join([*params[name], *values.split(",")]).strip(","),
            )
        params[name] = [v for v in values.split(",") if v != ""]
    return params


def points(params: dict[str, list[str]]) -> list[dict[str, str]]:
    names = list(params)
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(params[n] for n in names))
    ]


def substitute(args: list[str], point: dict[str, str]) -> list[str]:
    return [_PLACEHOLDER.sub(lambda m: point.get(m.group(1), m.group(0)), a) for a in args]


def unused_params(
    command: list[str], params: dict[str, list[str]], env: dict[str, str], cwd: str | None = None
) -> list[str]:
    """Parameters nothing mentions (argument, --env value, --remote-cwd): their values would never
    reach the program."""
    used = {
        m.group(1) for a in [*command, *env.values(), cwd or ""] for m in _PLACEHOLDER.finditer(a)
    }
    return [p for p in params if p not in used]


@dataclass
class PointResult:
    params: dict[str, str]
    status: str  # stored, skipped (already stored), failed
    run: str = ""
    host: str = ""
    error: str = ""
    # the profile's notes: a program that failed, a partial report
    notes: list[str] = field(default_factory=list)
    # why a stored point's numbers may lie: the program exited non-zero, the report is partial
    suspect: str = ""
    # --gpu was of another compute capability: the point is judged by its own GPU
    gpu_refused: str = ""
    # named in --metrics, absent from the report
    unknown_metrics: list[str] = field(default_factory=list)
    # the host went away: the point goes to another host
    lost: bool = field(default=False, repr=False)
    # the store or the run folders failed: stop the sweep
    fatal: bool = field(default=False, repr=False)


class _Pending:
    """Points not yet profiled. A worker waits while others still hold points, since a point whose
    host is lost comes back for the hosts left."""

    def __init__(self, todo: list[dict[str, str]]) -> None:
        self._todo = deque(todo)
        self._busy = 0
        self._cond = threading.Condition()
        self.stopped = ""  # why no more points are taken

    def take(self) -> dict[str, str] | None:
        with self._cond:
            while not self._todo and self._busy and not self.stopped:
                self._cond.wait()
            if not self._todo or self.stopped:
                return None
            self._busy += 1
            return self._todo.popleft()

    def done(self, again: dict[str, str] | None = None) -> None:
        with self._cond:
            self._busy -= 1
            if again is not None:
                self._todo.appendleft(again)
            self._cond.notify_all()

    def stop(self, reason: str) -> None:
        with self._cond:
            self.stopped = reason
            self._cond.notify_all()

    def left(self) -> list[dict[str, str]]:
        return list(self._todo)


def run_sweep(
    template: ProfileOptions,
    params: dict[str, list[str]],
    transports: list[Transport],
    sweep: str,
    *,
    resume: bool = False,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    gpu: str | None = None,
    on_point: Callable[[PointResult], None] = lambda r: None,
    on_event: Callable[[str, Event], None] = lambda host, event: None,
    on_state: OnState = lambda point, host, state: None,
    on_start: Callable[[dict[str, str], str], None] = lambda point, host: None,
    on_host_lost: Callable[[str, str], None] = lambda host, reason: None,
) -> list[PointResult]:
    """Profile every point, at most one at a time per transport (host), all hosts at once.

    A host that cannot be reached (or whose connection drops) is dropped and its point goes back to
    the others; a store that cannot be written stops the sweep. Every point ends with exactly one
    result. `on_state(point, host, state)`: a point's Slurm job was queued, started or ended
    (core/profiling/slurm.py); `on_start(point, host)`: a host took the point (its profile or job
    submission begins)."""
    env = env or {}
    results: list[PointResult] = []
    todo = []
    with Store() as store:
        for point in points(params):
            if resume and store.find(sweep, point) is not None:
                results.append(PointResult(point, "skipped", host=""))
                on_point(results[-1])
            else:
                todo.append(point)
    pending = _Pending(todo)
    lock = threading.Lock()
    lost: list[str] = []

    def record(result: PointResult) -> None:
        with lock:
            results.append(result)
        on_point(result)

    def worker(transport: Transport, finished: threading.Event) -> None:
        try:
            _work(transport)
        finally:
            finished.set()

    def _work(transport: Transport) -> None:
        try:
            store = Store()  # one SQLite connection per thread
        except FlopscopeError as err:
            pending.stop(err.line())
            return
        try:
            transport.connect()
            reachable = True
        # its first point says so and hands itself back (_one_point), with no second wait
        except FlopscopeError:
            reachable = False
        try:  # no ncu, counters for admins only: this host takes no point, the others take them
            if reachable:
                preflight(transport, template.ncu)
        except FlopscopeError as err:
            store.close()
            lost.append(f"{transport.host}: {err.line()}")
            on_host_lost(transport.host, err.line())
            return
        # this host's GPU: its tensor counters, asked once
        host_template = dataclasses.replace(template)
        with store:
            while (point := pending.take()) is not None:
                on_start(point, transport.host)
                result = _one_point(
                    host_template, point, transport, store, sweep, env, cwd, gpu, on_event, on_state
                )
                if result.lost:
                    pending.done(again=point)
                    lost.append(f"{transport.host}: {result.error}")
                    on_host_lost(transport.host, result.error)
                    return
                pending.done()
                # stopped by the user: not this point's failure
                if stopping() and result.status == "failed":
                    return
                record(result)
                if result.fatal:
                    pending.stop(result.error)

    finished = [threading.Event() for _ in transports]
    for transport, event in zip(transports, finished, strict=True):
        threading.Thread(target=worker, args=(transport, event), daemon=True).start()
    try:
        _wait(finished, None)
    # Ctrl-C or SIGTERM: each worker stops its ncu and cleans up before we leave
    except KeyboardInterrupt:
        pending.stop("stopped")
        stop_all()
        _wait(finished, STOP_WAIT_S)
        raise
    why = (
        f"not profiled: the sweep stopped ({pending.stopped})"
        if pending.stopped
        else (
            f"not profiled: no host left to run it (last lost {lost[-1]})"
            if lost
            else "not profiled"
        )
    )
    for point in pending.left():
        record(PointResult(point, "failed", error=why))
    return results


# how long a stop waits for the workers to remove their work folders and unfinished runs
STOP_WAIT_S = 15


def _wait(finished: list[threading.Event], seconds: float | None) -> None:
    """Wait for every worker, `seconds` in all (None: no limit); they are daemons, killed where they
    stand when Python exits. Not Thread.join: a join that Ctrl-C interrupts marks its thread as
    ended (CPython < 3.13), so a second join would not wait."""
    deadline = None if seconds is None else time.monotonic() + seconds
    for event in finished:
        event.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))


def _one_point(
    template: ProfileOptions,
    point: dict[str, str],
    transport: Transport,
    store: Store,
    sweep: str,
    env: dict[str, str],
    cwd: str | None,
    gpu: str | None,
    on_event: Callable[[str, Event], None],
    on_state: OnState = lambda point, host, state: None,
) -> PointResult:
    """Profile and store one point; never raises: whatever goes wrong is this point's one-line
    error."""
    opts = dataclasses.replace(
        template,
        command=substitute(template.command, point),
        nvtx_include=list(template.nvtx_include),
        ncu_args=list(template.ncu_args),
    )
    # values may hold a `/`
    label = sweep + "-" + folder_name("-".join(f"{k}={v}" for k, v in point.items()))
    failed = PointResult(point, "failed", host=transport.host)

    # a Slurm job says when it is queued, running and over; a process never calls it
    def watch(job: RunningJob) -> None:
        job.on_state = lambda state: on_state(point, transport.host, state)

    try:
        run_dir: Path = new_run_dir(label, opts.command)
    except FlopscopeError as err:  # the data folder: every later point would fail the same way
        failed.error, failed.fatal = err.line(), True
        return failed
    try:
        result = profile(
            opts,
            transport,
            run_dir,
            on_event=lambda e: on_event(transport.host, e),
            env={k: substitute([v], point)[0] for k, v in env.items()},
            cwd=substitute([cwd], point)[0] if cwd else None,
            gpu=gpu,
            on_process=watch,
        )
        # profile() raises where ncu wrote no report (profiler._finish)
        assert result.report is not None
        name = store.save_unique(
            result.report,
            run_dir.name,
            kind="sweep",
            sweep=sweep,
            params=point,
            host=transport.host,
            command=opts.command,
        )
        return PointResult(
            point,
            "stored",
            run=name,
            host=transport.host,
            notes=list(result.notes),
            suspect=result.warning,
            gpu_refused=result.gpu_refused,
            unknown_metrics=result.unknown_metrics,
        )
    except StoreError as err:
        failed.error, failed.fatal = f"{err.line()} (its report is kept in {run_dir})", True
        return failed
    except FlopscopeError as err:
        failed.error = err.line()
    # SQLite, a full disk, a timeout: this point fails, the others still run
    except Exception as exc:
        failed.error = (
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else 'no detail'}"
        )
    finally:
        # asked of this host once; a failed query is asked again at the next point
        if opts.tensor_metrics:
            template.tensor_metrics = opts.tensor_metrics
    # one without a report goes: its name stays free for --resume or the next host
    discard_unfinished(run_dir)
    if stopping():  # the user stopped the sweep: not this point's failure
        failed.error = "stopped"
        return failed
    # profiled again on another host, under this name
    failed.lost = _host_lost(transport, failed.error)
    return failed


def _host_lost(transport: Transport, error: str) -> bool:
    """Did the point fail because its host went away (not because of the program or ncu)? Asked of
    the host itself: ssh exits 255 when it cannot connect, whatever message the failure carried."""
    if isinstance(transport, LocalTransport):
        return False
    # unreachable or connection lost, as profile() says it
    if error.startswith(f"--host {transport.host}:"):
        return True
    try:
        return transport.output(["true"]).returncode != 0
    except Exception:
        return True
