"""Flow 3, sweep: a command template x parameter values -> one profile per point, spread over hosts.

`{name}` in an argument is replaced inside that argument only; the result stays one argv element and never
passes through a shell. Every point is stored as a run as soon as it finishes.
"""

from __future__ import annotations

import dataclasses
import itertools
import queue
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import FlopscopeError
from .ncu_command import ProfileOptions
from .profiler import profile
from .runs import new_run_dir
from .store import Store

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def parse_params(specs: list[str]) -> dict[str, list[str]]:
    """`batch_size=1,8,16` (repeatable) -> {"batch_size": ["1", "8", "16"]}."""
    params: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or not _NAME.match(name) or not values:
            raise FlopscopeError(f"--param {spec}", "expected NAME=V1,V2,...", "e.g. --param batch_size=1,8,16")
        params[name] = [v for v in values.split(",") if v != ""]
    return params


def points(params: dict[str, list[str]]) -> list[dict[str, str]]:
    names = list(params)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(params[n] for n in names))]


def substitute(args: list[str], point: dict[str, str]) -> list[str]:
    return [_PLACEHOLDER.sub(lambda m: point.get(m.group(1), m.group(0)), a) for a in args]


def unused_params(command: list[str], params: dict[str, list[str]], env: dict[str, str]) -> list[str]:
    """Parameters no argument mentions: their values would never reach the program."""
    used = {m.group(1) for a in [*command, *env.values()] for m in _PLACEHOLDER.finditer(a)}
    return [p for p in params if p not in used]


@dataclass
class PointResult:
    params: dict[str, str]
    status: str  # stored, skipped (already stored), failed
    run: str = ""
    host: str = ""
    error: str = ""


def run_sweep(template: ProfileOptions, params: dict[str, list[str]], transports: list, sweep: str, *,
              resume: bool = False, env: dict[str, str] | None = None, cwd: str | None = None,
              gpu: str | None = None, on_point: Callable[[PointResult], None] = lambda r: None,
              on_event: Callable = lambda host, event: None) -> list[PointResult]:
    """Profile every point, at most one at a time per transport (host), all hosts at once."""
    env = env or {}
    todo: queue.Queue = queue.Queue()
    results: list[PointResult] = []
    store = Store()
    for point in points(params):
        if resume and store.find(sweep, point) is not None:
            result = PointResult(point, "skipped", host="")
            results.append(result)
            on_point(result)
        else:
            todo.put(point)
    store.close()
    lock = threading.Lock()

    def worker(transport) -> None:
        store = Store()  # one SQLite connection per thread
        host_template = dataclasses.replace(template)  # this host's GPU: its tensor counters, asked once
        try:
            while True:
                try:
                    point = todo.get_nowait()
                except queue.Empty:
                    return
                result = _one_point(host_template, point, transport, store, sweep, env, cwd, gpu, on_event)
                with lock:
                    results.append(result)
                on_point(result)
        finally:
            store.close()

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in transports]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _one_point(template, point, transport, store: Store, sweep, env, cwd, gpu, on_event) -> PointResult:
    opts = dataclasses.replace(template, command=substitute(template.command, point),
                               nvtx_include=list(template.nvtx_include), ncu_args=list(template.ncu_args))
    label = sweep + "-" + "-".join(f"{k}={v}" for k, v in point.items())
    try:
        run_dir: Path = new_run_dir(label, opts.command)
        result = profile(opts, transport, run_dir, on_event=lambda e: on_event(transport.host, e),
                         env={k: substitute([v], point)[0] for k, v in env.items()},
                         cwd=substitute([cwd], point)[0] if cwd else None, gpu=gpu)
        name = store.unique_name(run_dir.name)
        store.save(result.report, name, kind="sweep", sweep=sweep, params=point, host=transport.host,
                   command=opts.command)
        return PointResult(point, "stored", run=name, host=transport.host)
    except FlopscopeError as err:
        return PointResult(point, "failed", host=transport.host, error=err.line())
    finally:
        if opts.tensor_metrics:  # asked of this host once; a failed query is asked again at the next point
            template.tensor_metrics = opts.tensor_metrics
