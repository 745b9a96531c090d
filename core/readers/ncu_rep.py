"""Binary `.ncu-rep` reports: the streaming reader (ncu_rep_stream.py) first, NVIDIA's `ncu_report`
module (PyPI `ncu-report`; needs no GPU) for what it cannot vouch for, and for what it does not
read."""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import pandas as pd

from ..common.errors import FlopscopeError, OutOfMemory
from ..common.memory import memory_limit
from ..common.units import base_unit_factor, metric_unit_factor
from .csv_text import nvtx_path
from .ncu_rep_stream import (
    MAGIC,
    Damaged,
    Progress,
    Unsupported,
    capture_time,
    fill_identity,
    read_table,
)
from .result import MetricTable
from .wanted import IDENTITY, MODIFIER_METRIC, OPCODE_METRIC, wanted

if TYPE_CHECKING:
    from ncu_report import IAction, IContext, IMetric

__all__ = ["MAGIC", "absent_metrics", "read_ncu_rep"]

# `ncu_report` forces the reader NVIDIA ships (to compare, or to get past a streaming-reader bug);
# unset, the streaming reader reads what it can vouch for.
READER_ENV = "FLOPSCOPE_NCU_REP_READER"
_T = TypeVar("_T")


# fd 2 is one per process: two threads reading reports at once (a sweep over two hosts) would each
# save the other's sink as "the terminal", and stderr would stay pointed at a deleted file. One
# capture at a time.
_FD2 = threading.Lock()
# What ncu_report's C++ layer writes: absl's prefix line, its log lines (`E0000 00:00:...`),
# protobuf's.
_NCU_REPORT_LOG = re.compile(
    rb"^(WARNING: All log messages before absl::InitializeLog|[EWIF]\d{4} \d\d:\d\d:|"
    rb"\[libprotobuf )"
)


@contextmanager
def _captured_stderr() -> Iterator[IO[bytes]]:
    """ncu_report's C++ layer logs protobuf/absl errors straight to fd 2; keep them out of the
    terminal.

    Reading a large report takes seconds to minutes, and other threads (a sweep's progress lines)
    write to fd 2 meanwhile: whatever is not ncu_report's own log is passed on to the real stderr
    afterwards, late but not lost. (The app draws on its own duplicate of the terminal,
    unaffected.)"""
    with _FD2, tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield sink
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            others = b"".join(line for line in sink if not _NCU_REPORT_LOG.match(line))
            if others:
                sys.audit("flopscope.native_stderr")  # not Python's output: none may replay it
                os.write(2, others)


def read_ncu_rep(path: Path, progress: Progress | None = None) -> MetricTable:
    """One row per profiled launch: identity columns plus wanted metrics in SI units. The streaming
    reader reads it in a fraction of the time and memory; a file it was not checked on (or cannot
    parse) is read by `ncu_report`, with a note in meta saying why, so a damaged file gets
    ncu_report's diagnosis."""
    note = None
    if os.environ.get(READER_ENV) != "ncu_report":
        try:
            frame = read_table(path, progress)
        except Damaged as damage:
            raise _refused(path, damage) from None
        except Unsupported as why:
            note = (
                f"read with NVIDIA's ncu_report (slower): the streaming reader does not read {why}"
            )
        else:
            return MetricTable(
                _with_identity(frame),
                {"format": "ncu-rep", "reader": "stream", "captured": capture_time(path)},
            )
    frame, meta = _read_with_ncu_report(path, progress)
    meta["captured"] = capture_time(path)
    if note and not str(note).endswith("no launch in the file"):
        meta["note"] = note
    return MetricTable(frame, meta)


def _refused(path: Path, damage: Damaged) -> FlopscopeError:
    if damage.truncated:
        return FlopscopeError(
            path,
            f"the report is truncated after {damage.launches} intact launch(es)",
            "copy it again from the GPU host (or re-run ncu)",
        )
    return FlopscopeError(
        path,
        f"cannot read this .ncu-rep ({damage})",
        "the file is truncated or corrupt; copy it again from the GPU host",
    )


def _with_identity(frame: pd.DataFrame) -> pd.DataFrame:
    for col in IDENTITY:
        if col not in frame:
            frame[col] = None
    return frame


def _read_with_ncu_report(path: Path, progress: Progress | None = None) -> MetricTable:
    # The C++ layer also logs while actions are read (a cut-short file parses lazily): capture it
    # throughout.
    with _captured_stderr() as log:
        rows = _in_child(path, log, lambda: _ncu_report_rows(path, log))
    # read in a child process (see _in_child): the count is known only at the end
    if progress is not None:
        progress(len(rows), len(rows))
    return MetricTable(
        _with_identity(pd.DataFrame(rows)), {"format": "ncu-rep", "reader": "ncu_report"}
    )


def _in_child(path: Path, log: IO[bytes], read: Callable[[], _T]) -> _T:
    """`read()` in a forked child, its result handed back pickled: out of memory, ncu_report's C++
    aborts the process (std::bad_alloc, SIGABRT) and a damaged file can crash it, which would end
    flopscope without a word (its stderr is being captured). From here the crash is one line naming
    the file, what happened and the fix. Python's own errors in the child (a refusal, MemoryError)
    are raised here as they were there."""
    if not hasattr(os, "fork"):
        return read()
    with tempfile.TemporaryFile() as result:
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            code = 0
            sent: object  # read()'s result, or what went wrong
            try:
                sent = read()
            except FlopscopeError as exc:
                sent, code = ("refused", exc.path, exc.problem, exc.fix), 3
            # MemoryError, KeyboardInterrupt, ...: the parent raises its kind
            except BaseException as exc:
                sent, code = ("error", type(exc).__name__, str(exc)), 3
            try:
                pickle.dump(sent, result, protocol=pickle.HIGHEST_PROTOCOL)
                result.flush()
            except BaseException:
                code = 4
            os._exit(code)
        try:
            _, status = os.waitpid(pid, 0)
        except BaseException:  # Ctrl-C: the child got it too; do not leave it behind
            _stop_child(pid)
            raise
        if os.WIFSIGNALED(status) or os.waitstatus_to_exitcode(status) == 4:
            raise _crashed(path, log, os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
        result.seek(0)
        out = pickle.load(result)
    if os.waitstatus_to_exitcode(status) == 3:
        if out[0] == "refused":
            raise FlopscopeError(*out[1:])
        kind = {"MemoryError": MemoryError, "KeyboardInterrupt": KeyboardInterrupt}.get(
            out[1], RuntimeError
        )
        raise kind(out[2])
    return cast(_T, out)  # what read() returned in the child


def _stop_child(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _crashed(path: Path, log: IO[bytes], signum: int | None) -> FlopscopeError:
    words = _log_lines(log)
    # said in the one line below, not again after it (the capture passes on what it kept)
    log.truncate(0)
    out_of_memory = any("bad_alloc" in w or "out of memory" in w.lower() for w in words)
    if out_of_memory or signum is None:
        return OutOfMemory(
            path,
            f"ncu_report ran out of memory reading it ({memory_limit()})",
            f"read it where more memory is free, or export it with `ncu --import {path} --csv "
            "--page raw > report.csv` (ncu streams the file) and open the CSV",
        )
    last = f": {words[-1].strip()[:120]}" if words else ""
    return FlopscopeError(
        path,
        f"ncu_report crashed reading it ({signal.Signals(signum).name}{last})",
        "the file may be damaged: copy it again from the GPU host, or export it with `ncu "
        f"--import {path} --csv --page raw > report.csv` and open the CSV",
    )


def _ncu_report_rows(path: Path, log: IO[bytes]) -> list[dict[str, Any]]:
    import ncu_report

    try:
        ctx = ncu_report.load_report(str(path))
    except Exception as exc:  # the module raises bare RuntimeError/ValueError on damaged files
        raise _damaged(path, log, str(exc) or type(exc).__name__) from None
    rows = _rows(path, ctx)
    if not rows:
        if _log_lines(log):  # nothing read, and the parser complained: damage, not an empty profile
            raise _damaged(path, log, "no launch could be parsed")
        # ncu writes no report when it profiled nothing, so an empty one is most likely cut short.
        raise FlopscopeError(
            path,
            "no launch could be read: the file is most likely truncated",
            "copy it again from the GPU host (if ncu profiled nothing, check its filters)",
        )
    return rows


def absent_metrics(path: Path, names: list[str]) -> list[str]:
    """Those of `names` that no launch of the report holds. ncu 2025.3.1 profiles with a metric it
    does not know (captured on the H100: tests/data/gpu/.../unknown_metric.*; older ncu refused the
    profile), prints `(!) n/a` for it only in a console table and leaves it out of the report. A
    base name (`dram__bytes`) is held by its rollups (`dram__bytes.sum`);
    `regex:`/`group:`/`breakdown:` names cannot be told apart."""
    import ncu_report

    with _captured_stderr():
        ctx = ncu_report.load_report(str(path))
        held = {
            name
            for r in range(ctx.num_ranges())
            for i in range(ctx.range_by_idx(r).num_actions())
            for name in ctx.range_by_idx(r).action_by_idx(i).metric_names()
        }
    return [
        n
        for n in names
        if ":" not in n and n not in held and not any(h.startswith(f"{n}.") for h in held)
    ]


def _rows(path: Path, ctx: IContext) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    kept = _WantedNames()
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            action = rng.action_by_idx(i)
            if action.name() is None and not action.metric_names():
                # ncu_report hands back empty actions where a file was cut short.
                raise FlopscopeError(
                    path,
                    f"the report is truncated after {len(rows)} intact launch(es)",
                    "copy it again from the GPU host (or re-run ncu)",
                )
            rows.append(_action_row(action, len(rows), kept))
    return rows


def _log_lines(log: IO[bytes]) -> list[str]:
    log.seek(0)
    return [line for line in log.read().decode(errors="replace").splitlines() if line.strip()]


def _damaged(path: Path, log: IO[bytes], fallback: str) -> FlopscopeError:
    lines = _log_lines(log)
    reason = lines[-1] if lines else fallback
    return FlopscopeError(
        path,
        f"cannot read this .ncu-rep ({reason.strip()[:160]})",
        "the file is truncated or corrupt; copy it again from the GPU host",
    )


class _WantedNames:
    """The wanted metrics among a launch's ~380 names, decided once per distinct list of names:
    launches of a report repeat the same list, and the `wanted` regex on every name of every launch
    would be a sizeable share of the read."""

    def __init__(self) -> None:
        self._lists: dict[tuple[str, ...], list[str]] = {}
        self._names: dict[str, bool] = {}  # lists differ a little between launches; names repeat

    def __call__(self, names: Iterable[str]) -> list[str]:
        key = tuple(names)
        if key not in self._lists:
            self._lists[key] = [name for name in key if self._wanted(name)]
        return self._lists[key]

    def _wanted(self, name: str) -> bool:
        if name not in self._names:
            self._names[name] = wanted(name)
        return self._names[name]


def _action_row(action: IAction, index: int, kept: _WantedNames | None = None) -> dict[str, Any]:
    import ncu_report

    row: dict[str, Any] = {
        "launch_id": index,
        "kernel_base": action.name(),
        "kernel_full": action.name(ncu_report.IAction.NameBase_DEMANGLED),
    }
    for name in (kept or _WantedNames())(action.metric_names()):
        metric = action.metric_by_name(name)
        if name in (OPCODE_METRIC, MODIFIER_METRIC):
            row.update(_per_opcode(metric, name))
            continue
        value = metric.value()
        if isinstance(value, (int, float)):
            # blank: the value is in the metric's base unit, as the report stores it
            unit = metric.unit()
            row[name] = float(value) * (
                metric_unit_factor(name, unit) if unit else base_unit_factor(name)
            )
        else:
            row[name] = value
    fill_identity(row)
    row["nvtx"] = _nvtx(action)
    return row


def _per_opcode(metric: IMetric, name: str) -> dict[str, float]:
    ids = metric.correlation_ids()
    if ids is None:
        return {}
    return {
        f"{name}:{ids.as_string(j)}": float(metric.as_uint64(j))
        for j in range(metric.num_instances())
    }


def _nvtx(action: IAction) -> str | None:
    """Push/pop then start/end ranges of every domain, outermost first, as the structured stack
    (`nvtx_path`)."""
    state = action.nvtx_state()
    if state is None:
        return None
    domains = [state.domain_by_id(i) for i in state.domains()]
    return nvtx_path(
        [
            (d.name() or "", [str(n) for n in (*d.push_pop_ranges(), *d.start_end_ranges())])
            for d in domains
        ]
    )
