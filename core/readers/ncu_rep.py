"""Binary `.ncu-rep` reports: the streaming reader (ncu_rep_stream.py) first, NVIDIA's `ncu_report` module
(PyPI `ncu-report`; needs no GPU) for what it cannot vouch for, and for what it does not read."""

from __future__ import annotations

import os
import re
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from ..errors import FlopscopeError
from ..units import metric_unit_factor
from .ncu_rep_stream import MAGIC, Damaged, Progress, Unsupported, fill_identity, nvtx_path, read_table
from .wanted import IDENTITY, MODIFIER_METRIC, OPCODE_METRIC, wanted

__all__ = ["MAGIC", "absent_metrics", "read_ncu_rep"]

# `ncu_report` forces the reader NVIDIA ships (to compare, or to get past a streaming-reader bug); unset, the
# streaming reader reads what it can vouch for.
READER_ENV = "FLOPSCOPE_NCU_REP_READER"


# fd 2 is one per process: two threads reading reports at once (a sweep over two hosts) would each save the
# other's sink as "the terminal", and stderr would stay pointed at a deleted file. One capture at a time.
_FD2 = threading.Lock()
# What ncu_report's C++ layer writes: absl's prefix line, its log lines (`E0000 00:00:...`), protobuf's.
_NCU_REPORT_LOG = re.compile(rb"^(WARNING: All log messages before absl::InitializeLog|[EWIF]\d{4} \d\d:\d\d:|"
                             rb"\[libprotobuf )")


@contextmanager
def _captured_stderr():
    """ncu_report's C++ layer logs protobuf/absl errors straight to fd 2; keep them out of the terminal.

    Reading a large report takes seconds to minutes, and other threads (a sweep's progress lines) write to
    fd 2 meanwhile: whatever is not ncu_report's own log is passed on to the real stderr afterwards, late
    but not lost. (The app draws on its own duplicate of the terminal, unaffected.)"""
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
                os.write(2, others)


def read_ncu_rep(path: Path, progress: Progress | None = None) -> tuple[pd.DataFrame, dict]:
    """One row per profiled launch: identity columns plus wanted metrics in SI units. The streaming reader
    reads it in a fraction of the time and memory; a file it was not checked on (or cannot parse) is read
    by `ncu_report`, with a note in meta saying why, so a damaged file gets ncu_report's diagnosis."""
    note = None
    if os.environ.get(READER_ENV) != "ncu_report":
        try:
            frame = read_table(path, progress)
        except Damaged as damage:
            raise _refused(path, damage) from None
        except Unsupported as why:
            note = f"read with NVIDIA's ncu_report (slower): the streaming reader does not read {why}"
        else:
            return _with_identity(frame), {"format": "ncu-rep", "reader": "stream"}
    frame, meta = _read_with_ncu_report(path, progress)
    if note and not str(note).endswith("no launch in the file"):
        meta["note"] = note
    return frame, meta


def _refused(path: Path, damage: Damaged) -> FlopscopeError:
    if damage.truncated:
        return FlopscopeError(path, f"the report is truncated after {damage.launches} intact launch(es)",
                              "copy it again from the GPU host (or re-run ncu)")
    return FlopscopeError(path, f"cannot read this .ncu-rep ({damage})",
                          "the file is truncated or corrupt; copy it again from the GPU host")


def _with_identity(frame: pd.DataFrame) -> pd.DataFrame:
    for col in IDENTITY:
        if col not in frame:
            frame[col] = None
    return frame


def _read_with_ncu_report(path: Path, progress: Progress | None = None) -> tuple[pd.DataFrame, dict]:
    import ncu_report

    # The C++ layer also logs while actions are read (a cut-short file parses lazily): capture it throughout.
    with _captured_stderr() as log:
        try:
            ctx = ncu_report.load_report(str(path))
        except Exception as exc:  # the module raises bare RuntimeError/ValueError on damaged files
            raise _damaged(path, log, str(exc) or type(exc).__name__) from None
        rows = _rows(path, ctx, progress)
        if not rows:
            if _log_lines(log):  # nothing read, and the parser complained: damage, not an empty profile
                raise _damaged(path, log, "no launch could be parsed")
            # ncu writes no report when it profiled nothing, so an empty one is most likely cut short.
            raise FlopscopeError(path, "no launch could be read: the file is most likely truncated",
                                 "copy it again from the GPU host (if ncu profiled nothing, check its filters)")
    return _with_identity(pd.DataFrame(rows)), {"format": "ncu-rep", "reader": "ncu_report"}


def absent_metrics(path: Path, names: list[str]) -> list[str]:
    """Those of `names` that no launch of the report holds. ncu 2025.3.1 profiles with a metric it does not know
    (captured on the H100: tests/data/gpu/.../unknown_metric.*; older ncu refused the profile), prints
    `(!) n/a` for it only in a console table and leaves it out of the report. A base name (`dram__bytes`) is
    held by its rollups (`dram__bytes.sum`); `regex:`/`group:`/`breakdown:` names cannot be told apart."""
    import ncu_report

    with _captured_stderr():
        ctx = ncu_report.load_report(str(path))
        held = {name for r in range(ctx.num_ranges()) for i in range(ctx.range_by_idx(r).num_actions())
                for name in ctx.range_by_idx(r).action_by_idx(i).metric_names()}
    return [n for n in names if ":" not in n and n not in held and not any(h.startswith(f"{n}.") for h in held)]


def _rows(path: Path, ctx, progress: Progress | None = None) -> list[dict]:
    """Every launch's row. `progress` counts them after ncu_report has loaded the whole file (its load
    reports nothing as it goes)."""
    rows: list[dict] = []
    total = sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            action = rng.action_by_idx(i)
            if action.name() is None and not action.metric_names():
                # ncu_report hands back empty actions where a file was cut short.
                raise FlopscopeError(path, f"the report is truncated after {len(rows)} intact launch(es)",
                                     "copy it again from the GPU host (or re-run ncu)")
            rows.append(_action_row(action, len(rows)))
            if progress is not None:
                progress(len(rows), total)
    return rows


def _log_lines(log) -> list[str]:
    log.seek(0)
    return [line for line in log.read().decode(errors="replace").splitlines() if line.strip()]


def _damaged(path: Path, log, fallback: str) -> FlopscopeError:
    lines = _log_lines(log)
    reason = lines[-1] if lines else fallback
    return FlopscopeError(path, f"cannot read this .ncu-rep ({reason.strip()[:160]})",
                          "the file is truncated or corrupt; copy it again from the GPU host")


def _action_row(action, index: int) -> dict:
    import ncu_report

    row: dict = {"launch_id": index, "kernel_base": action.name(),
                 "kernel_full": action.name(ncu_report.IAction.NameBase_DEMANGLED)}
    for name in action.metric_names():
        if not wanted(name):
            continue
        metric = action.metric_by_name(name)
        if name in (OPCODE_METRIC, MODIFIER_METRIC):
            row.update(_per_opcode(metric, name))
            continue
        value = metric.value()
        if isinstance(value, (int, float)):
            row[name] = float(value) * metric_unit_factor(name, metric.unit())
        else:
            row[name] = value
    fill_identity(row)
    row["nvtx"] = _nvtx(action)
    return row


def _per_opcode(metric, name: str) -> dict:
    ids = metric.correlation_ids()
    if ids is None:
        return {}
    return {f"{name}:{ids.as_string(j)}": float(metric.as_uint64(j)) for j in range(metric.num_instances())}


def _nvtx(action) -> str | None:
    """Push/pop ranges of every domain, outermost first, joined as `domain:range/range`."""
    state = action.nvtx_state()
    if state is None:
        return None
    domains = [state.domain_by_id(i) for i in state.domains()]
    return nvtx_path([(d.name() or "", [str(n) for n in (*d.push_pop_ranges(), *d.start_end_ranges())])
                      for d in domains])
