"""Flow 2, profile: command -> ncu argv -> transport -> live events -> report brought back ->
Report."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..common.disk import write_error, write_text_whole
from ..common.errors import FlopscopeError
from ..ncu.catalogue import parse_catalogue, query_argv, tensor_op_metrics
from ..ncu.command import ProfileOptions, import_raw_argv, metric_list, ncu_argv
from ..ncu.metrics import METRIC_SETS
from ..ncu.progress import Event, app_exit_code, explain, parse_lines
from ..readers.ncu_rep import absent_metrics
from ..report.report import Report, read_report
from .doctor import preflight
from .module_ranges import sitecustomize_source
from .timing_run import timing_run
from .transport import RunningJob, Transport

EXIT_NOT_FOUND = 127


@dataclass
class ProfileResult:
    run_dir: Path
    report: Report | None
    events: list[Event] = field(default_factory=list)
    ncu_exit: int = 0
    connection_lost: bool = False
    app_exit: int | None = None
    notes: list[str] = field(default_factory=list)
    # --gpu was not of the report's compute capability: judged by its own GPU instead
    gpu_refused: str = ""
    # asked for by name, left out of the report by ncu
    unknown_metrics: list[str] = field(default_factory=list)
    ncu_seconds: float = 0.0  # how long ncu (and the program under it) ran

    @property
    def kernels_profiled(self) -> int:
        return sum(e.kind == "kernel" for e in self.events)

    @property
    def warning(self) -> str:
        """Why the report may not be the program's real work ("" when clean): a crash or an
        out-of-memory at one sweep point would otherwise bend the fits unnoticed."""
        if self.app_exit not in (None, 0):
            return f"the command exited with code {self.app_exit}"
        return "the connection was lost: the report is partial" if self.connection_lost else ""

    @property
    def warned(self) -> bool:
        """Kept, but not as asked or not clean: `profile` and `sweep` exit 1 for it."""
        return bool(self.warning or self.gpu_refused or self.unknown_metrics)


def profile(
    opts: ProfileOptions,
    transport: Transport,
    run_dir: Path,
    on_event: Callable[[Event], None] = lambda e: None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    gpu: str | None = None,
    on_process: Callable[[RunningJob], None] = lambda p: None,
) -> ProfileResult:
    """Run `opts.command` under ncu through `transport`; keep everything in `run_dir`."""
    started = time.time()
    # an unreachable host fails here, once, before the questions below each wait for it
    transport.connect()
    preflight(transport, opts.ncu)  # no ncu, counters for admins only: refused now, with the fix
    if opts.compute_capability is None:
        opts.compute_capability = detect_compute_capability(transport)
    result = ProfileResult(run_dir, None)
    if opts.metrics in ("roofline", "flops") and opts.tensor_metrics is None:
        opts.tensor_metrics = target_tensor_metrics(transport, opts.ncu, result.notes, env)
    workdir = transport.make_workdir()
    keep = False  # a report that could not be copied stays on the host, and the error says where
    try:
        if opts.modules:
            env = module_hooks(transport, workdir, env)
        stem = f"{workdir}/report"
        argv = ncu_argv(opts, stem)
        _write_meta(run_dir, opts, transport.host, argv, started, cwd, env)
        ncu_started = time.monotonic()
        result.ncu_exit = _stream(
            transport, argv, cwd, env, run_dir / "ncu.log", result, on_event, on_process
        )
        result.ncu_seconds = time.monotonic() - ncu_started
        try:
            have = transport.fetch(f"{stem}.ncu-rep", run_dir / "report.ncu-rep")
        except FlopscopeError:
            if not result.connection_lost:
                keep = True
                raise
            have = False  # the connection is gone: _finish says so
        if have:
            _save_raw_page(transport, opts, f"{stem}.ncu-rep", run_dir / "raw.csv", result)
        if have and opts.modules and opts.timing and env is not None and not result.connection_lost:
            result.notes.append(
                _timed(transport, opts, workdir, run_dir, env, cwd, on_process, on_event)
            )
    finally:
        if not keep:
            transport.remove(workdir)
    result.app_exit = app_exit_code([e.text for e in result.events if e.kind == "error"])
    _finish(result, transport.host, have, opts)
    if have:
        result.report = _read(
            run_dir / "report.ncu-rep", gpu, opts, transport.host, result.ncu_exit, result
        )
        if result.warning:  # stored with the run, so every later analysis of it can say so
            result.report.meta = replace(result.report.meta, warning=result.warning)
        _check_named_metrics(opts, run_dir / "report.ncu-rep", result)
    try:
        _write_meta(run_dir, opts, transport.host, argv, started, cwd, env, result)
    except FlopscopeError as err:  # the report is whole: it is still shown and stored
        result.notes.append(f"warning: {err.line()}")
    return result


def _timed(
    transport: Transport,
    opts: ProfileOptions,
    workdir: str,
    run_dir: Path,
    env: dict[str, str],
    cwd: str | None,
    on_process: Callable[[RunningJob], None],
    on_event: Callable[[Event], None],
) -> str:
    """The timing run's note: one that fails (a lost connection, a full disk) costs the profile
    nothing."""
    try:
        return timing_run(
            transport,
            opts.command,
            workdir,
            run_dir,
            env,
            cwd,
            on_process,
            on_event,
            opts.timing_limit_s,
        )
    except FlopscopeError as err:
        return f"timing run: no step times ({err.line()})"


def detect_compute_capability(transport: Transport) -> str | None:
    done = transport.output(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"])
    lines = done.stdout.strip().splitlines() if done.returncode == 0 else []
    return lines[0].strip() if lines and lines[0].strip().replace(".", "").isdigit() else None


def target_tensor_metrics(
    transport: Transport, ncu: str, notes: list[str], env: dict[str, str] | None = None
) -> list[str]:
    """The tensor op counters the target's ncu offers for its GPU; none (with a note) if it cannot
    say. Asked with the profile's own `env`: CUDA_VISIBLE_DEVICES there picks the GPU whose counters
    count."""
    done = transport.output(query_argv(ncu), env)
    catalogue = parse_catalogue(done.stdout) if done.returncode == 0 else set()
    if not catalogue:
        notes.append(
            "tensor op counters not collected: `ncu --query-metrics --csv` listed no metrics"
            f" ({_last_line(done.stderr or done.stdout) or 'no output'}); tensor FLOPs may be"
            " unknown"
        )
    return tensor_op_metrics(catalogue)


def _read(
    path: Path,
    gpu: str | None,
    opts: ProfileOptions,
    host: str,
    ncu_exit: int,
    result: ProfileResult,
) -> Report:
    """The report, judged against --gpu's ceilings. A --gpu of another compute capability than the
    GPU it ran on (known only now; its name was checked before ncu ran) does not lose the profile:
    it is judged by its own GPU, and `result.gpu_refused` says so with the way to judge it again."""
    if gpu:
        try:
            return read_report(path, gpu=gpu, params={"command": opts.command, "host": host})
        except FlopscopeError as err:
            # the report's own fault raises here
            report = _read(path, None, opts, host, ncu_exit, result)
            result.gpu_refused = (
                f"--gpu {gpu}: {err.problem}; judged against its own GPU's ceilings instead "
                f"({report.meta.gpu_database_name or 'none in the database'})"
            )
            result.notes.append(
                f"warning: {result.gpu_refused}; `flopscope open RUN --gpu NAME` judges it again"
                f" ({err.fix})"
            )
            return report
    try:
        return read_report(path, params={"command": opts.command, "host": host})
    except FlopscopeError as err:
        if _killed(ncu_exit) is None:
            raise
        raise FlopscopeError(
            str(path),
            f"ncu was killed by signal {_killed(ncu_exit)} while writing it, so it is incomplete"
            f" ({err.problem})",
            "profile again",
        ) from None


# Writes the hooks file on the target with the target's own python3 (the program's Python may be
# another).
_WRITE_HOOKS = (
    "import os, sys; os.makedirs(sys.argv[1], exist_ok=True); "
    "open(os.path.join(sys.argv[1], 'sitecustomize.py'), 'w', encoding='utf-8').write(sys.argv[2])"
)


def module_hooks(transport: Transport, workdir: str, env: dict[str, str] | None) -> dict[str, str]:
    """`--modules`: the hooks (module_ranges.py) as the program's sitecustomize, in the run's work
    folder on the target, first on the program's PYTHONPATH (after it, the PYTHONPATH of --env, or
    of this process when the target is this machine). The program itself is run as given."""
    hooks = f"{workdir}/hooks"
    done = transport.output(["python3", "-c", _WRITE_HOOKS, hooks, sitecustomize_source()])
    if done.returncode != 0:
        raise FlopscopeError(
            f"--modules on {transport.host}",
            "cannot write the module hooks"
            f" ({_last_line(done.stderr.splitlines()) or f'exit {done.returncode}'})",
            "check that python3 runs there, or profile without --modules and use"
            " flopscope.torch.annotate(model)",
        )
    given = dict(env or {})
    rest = given.get("PYTHONPATH") or (
        os.environ.get("PYTHONPATH", "") if transport.host == "localhost" else ""
    )
    return {**given, "PYTHONPATH": hooks + (os.pathsep + rest if rest else "")}


def _check_named_metrics(opts: ProfileOptions, report: Path, result: ProfileResult) -> None:
    """A metric named in --metrics that ncu did not know: older ncu refused the profile (explain()
    names it), ncu 2025.3.1 profiles without it and exits 0, so only the report's metric names tell
    (a typo would otherwise pass unnoticed). flopscope's own sets are not checked: a counter of
    theirs that the table needs and the report lacks is named by the report's own missing-counter
    line, with the ncu option that collects it."""
    if opts.metrics in METRIC_SETS or opts.metrics == "full":
        return
    unknown = result.unknown_metrics = absent_metrics(report, metric_list(opts) or [])
    if unknown:
        them = "it" if len(unknown) == 1 else "them"
        result.notes.append(
            f"warning: --metrics {','.join(unknown)}: ncu collected no value for {them} (n/a): no"
            f" such metric for this GPU or ncu version (ncu 2025.3.1 profiles without {them} where"
            " older ncu refused); `ncu --query-metrics` lists what exists"
        )


def _killed(code: int) -> int | None:
    """The signal that ended ncu: Popen says -N here, a remote shell says 128+N."""
    if code < 0:
        return -code
    return code - 128 if 128 < code < 160 else None


def _stream(
    transport: Transport,
    argv: list[str],
    cwd: str | None,
    env: dict[str, str] | None,
    log_path: Path,
    result: ProfileResult,
    on_event: Callable[[Event], None],
    on_process: Callable[[RunningJob], None],
) -> int:
    job = transport.popen(argv, cwd, env)
    on_process(job)  # lets a UI stop the run
    outputs = 0  # lines of the program's output in result.events
    try:
        with log_path.open("w") as log:
            for line in job.stdout:
                log.write(line)
                log.flush()
                for event in parse_lines(line):
                    result.events.append(event)
                    if event.kind == "output":
                        outputs += 1
                        # amortised: O(1) a line
                        if outputs > max(2 * KEPT_OUTPUT, len(result.events) // 2):
                            outputs = _trim_output(result.events, outputs)
                    on_event(event)
        _trim_output(result.events, outputs)
    except BaseException as exc:
        # Ctrl-C, a full disk, or a UI callback that failed: ncu must not run on unwatched
        job.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            job.wait(timeout=10)  # before its folder is removed under it
        if isinstance(exc, OSError):
            raise write_error(
                log_path, exc, "cannot write ncu's output (ncu was stopped)"
            ) from None
        raise
    code = job.wait()
    result.connection_lost = job.connection_lost
    return code


# lines of the program's output a result keeps: a chatty program must not fill memory
KEPT_OUTPUT = 200


def _trim_output(events: list[Event], outputs: int) -> int:
    """Drop all but the last KEPT_OUTPUT lines of the program's output from `events` (which holds
    `outputs` of them), keeping every ncu event wherever it sits (ncu.log has everything); the lines
    left."""
    extra = outputs - KEPT_OUTPUT
    if extra <= 0:
        return outputs
    kept = []
    for event in events:
        if extra > 0 and event.kind == "output":
            extra -= 1
        else:
            kept.append(event)
    events[:] = kept
    return KEPT_OUTPUT


def _save_raw_page(
    transport: Transport, opts: ProfileOptions, report: str, out: Path, result: ProfileResult
) -> None:
    # Per-instance values make a full-set page 10-16x larger; only per-opcode counts need them.
    metrics = metric_list(opts)
    instances = metrics is None or any(m.startswith("sass__") for m in metrics)
    done = transport.output(import_raw_argv(opts.ncu, report, instances))
    # an older ncu
    if done.returncode != 0 and "--print-metric-instances" in done.stderr + done.stdout:
        done = transport.output(import_raw_argv(opts.ncu, report, instances=False))
    if done.returncode == 0 and done.stdout.strip():
        try:
            write_text_whole(out, done.stdout, "cannot write the raw CSV page")
        # a convenience beside the report: the profile goes on without it
        except FlopscopeError as err:
            result.notes.append(f"raw CSV page not saved ({err.line()})")
    else:
        result.notes.append(
            "raw CSV page not saved (ncu --import failed:"
            f" {_last_line(done.stderr or done.stdout)})"
        )


def _finish(result: ProfileResult, host: str, have_report: bool, opts: ProfileOptions) -> None:
    """Turn ncu's exit into a report, a note, or one FlopscopeError with the fix."""
    errors = [e.text for e in result.events if e.kind == "error"]
    output = [e.text for e in result.events]
    where = host if host != "localhost" else "this machine"
    if result.connection_lost:
        lost = f"connection to {host} lost after {result.kernels_profiled} kernel(s) profiled"
        if not have_report:
            raise FlopscopeError(
                f"--host {host}", f"{lost} ({_last_line(output)})", "check the network or the host"
            )
        result.notes.append(lost + "; showing the partial report")
        return
    if result.ncu_exit == EXIT_NOT_FOUND and any(
        ("not found" in line or "No such file" in line) and opts.ncu in line for line in output[-3:]
    ):
        raise FlopscopeError(
            opts.ncu,
            f"ncu not found on {where} (looked in the PATH of a non-interactive shell)",
            "pass --ncu /usr/local/cuda/bin/ncu (or wherever Nsight Compute is installed)",
        )
    fix = explain(errors, host)
    if not have_report and result.ncu_exit == 0 and not errors and result.kernels_profiled == 0:
        raise FlopscopeError(
            f"ncu on {where}",
            "no kernel was profiled, so ncu wrote no report",
            "check that the command launches CUDA kernels and that -k, --launch-count and"
            " --launch-skip match them",
        )
    if not have_report:
        problem = (
            _telling(errors) or _last_line(output) or f"ncu exited with code {result.ncu_exit}"
        )
        raise FlopscopeError(
            f"ncu on {where}",
            problem.strip(),
            fix or "`flopscope profile --no-tui` prints every line ncu wrote",
        )
    if result.app_exit not in (None, 0):
        result.notes.append(
            f"the command exited with code {result.app_exit}; showing what was profiled"
        )
    if fix:
        result.notes.append(fix)


_GENERIC = (
    "The application returned an error code",
    "An error was reported by",
    "An error occurred while",
)


def _telling(errors: list[str]) -> str:
    """The error that says what went wrong, not ncu's generic follow-ups ("the application returned
    ...")."""
    specific = [e for e in errors if not e.startswith(_GENERIC)]
    return (specific or errors or [""])[-1]


def _last_line(lines: str | list[str]) -> str:
    given = lines.splitlines() if isinstance(lines, str) else lines
    kept = [ln.strip() for ln in given if ln.strip()]
    return kept[-1] if kept else ""


def _write_meta(
    run_dir: Path,
    opts: ProfileOptions,
    host: str,
    argv: list[str],
    started: float,
    cwd: str | None,
    env: dict[str, str] | None,
    result: ProfileResult | None = None,
) -> None:
    meta: dict[str, object] = {
        "host": host,
        "command": opts.command,
        "ncu_argv": argv,
        "metrics": opts.metrics,
        "cwd": cwd,
        "env": env or {},
        "started": started,
        "compute_capability": opts.compute_capability,
    }
    if result is not None:
        meta.update(
            finished=time.time(),
            ncu_exit=result.ncu_exit,
            app_exit=result.app_exit,
            kernels_profiled=result.kernels_profiled,
            ncu_seconds=round(result.ncu_seconds, 3),
            passes=[e.passes for e in result.events if e.kind == "kernel"],
            notes=result.notes,
        )
    write_text_whole(
        run_dir / "run.json", json.dumps(meta, indent=1), "cannot write the run's record"
    )
