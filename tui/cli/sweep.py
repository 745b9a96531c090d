"""`flopscope sweep`: profile a command over parameter values, or analyse runs and files already
made."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ...core import FlopscopeError, read_report
from ...core.analysis import Slice, slices, sweep_points
from ...core.common import data_home, display_text, find_gpu
from ...core.ncu import describe
from ...core.profiling import (
    JOBS_AT_ONCE,
    STOP_WAIT_S,
    LocalTransport,
    SlurmOptions,
    SlurmTransport,
    SshTransport,
    parse_params,
    points,
    run_sweep,
    stop_all,
    substitute,
    unused_params,
)
from ...core.report import with_gpu
from ...core.store import Store
from ..presentation import format as fmt
from ..presentation.columns import WARNING_CELLS, sweep_columns
from ..presentation.sweep_analysis import FITTED, Analysis, analyse, fit_line, sweep_json
from ..presentation.text_report import console, fitted_table, print_hidden, say, specs
from .profile import checked_options, open_store


def cmd_sweep(args: argparse.Namespace) -> int:
    """Exit 0 when every point is stored cleanly, 1 when some failed or were stored with a warning
    (the program exited non-zero, the report is partial), 2 when none could be stored; the analysis
    of what was stored prints either way. In a terminal the app shows each point's state as the
    sweep goes, then the analysis."""
    code, results = 0, None
    in_app = not args.json and not args.no_tui and sys.stdin.isatty() and sys.stdout.isatty()
    if args.sources:
        lines = _from_sources(args)
        title = args.sweep_name or "from-files"
    elif in_app:
        return _profile_in_app(args)
    else:
        lines, title, code, results = _profile_points(args)
    if lines and in_app:
        from ..app.launch import run_sweep  # Textual only for the app

        return (
            run_sweep(
                lines, title, tolerance=args.tolerance, judged=judged_against(lines, args.gpu)
            )
            or code
        )
    _show(title, lines, args, results)
    if args.sources:  # a sweep that profiles stores its points; this one only reads, which it says
        points = sum(len(line.points) for line in lines)
        print(
            f"flopscope: sweep --from read {points} point(s) and stored nothing (report files stay"
            " files: `flopscope import FOLDER` stores a run folder, `flopscope sweep --param ...`"
            " profiles and stores a sweep)",
            file=sys.stderr,
        )
    return code


def _profile_points(args) -> tuple[list[Slice], str, int, list]:
    template, params, env, sweep = _prepare(args)
    results = _run(args, template, params, env, sweep)
    code = _summarise(results, params, sweep)
    return _lines(sweep), sweep, code, results


def _profile_in_app(args) -> int:
    """The sweep in a worker thread under the app's live screen; what the CLI says of it (the
    summary, damaged runs) prints once the app is closed, so nothing writes over the screen."""
    from ..app.keymap import load_keymap
    from ..app.launch import run_live_sweep
    from ..app.screens.live_sweep import STOPPED, LiveSweepScreen

    load_keymap()  # a bad [keymap] file is refused before anything runs
    template, params, env, sweep = _prepare(args)
    transports, opened = _transports(args, len(points(params)))
    results: list = []
    said: list[str] = []  # printed once the app has closed
    finished = threading.Event()

    def job(**callbacks) -> tuple[list[Slice], str | None]:
        try:
            results.extend(
                run_sweep(
                    template,
                    params,
                    transports,
                    sweep,
                    resume=args.resume,
                    env=env,
                    cwd=args.remote_cwd,
                    gpu=args.gpu,
                    **callbacks,
                )
            )
        finally:
            finished.set()
        lines = _lines(sweep, said.append)
        return lines, judged_against(lines, args.gpu)

    screen = LiveSweepScreen(job, points(params), sweep, args.tolerance)
    try:
        code = run_live_sweep(screen)
    finally:
        # stopped (or the app failed): every point under way ends and is cleaned up
        if not finished.is_set():
            stop_all()
            finished.wait(STOP_WAIT_S + 5)
        for t in opened:
            t.close()
    for line in said:
        say(line)
    if screen.stopped:
        say(
            f"flopscope: sweep {sweep} stopped; `flopscope sweep --resume --sweep-name {sweep} ...`"
            " profiles the points not stored yet"
        )
        return STOPPED
    return _summarise(results, params, sweep) or code


def _prepare(args) -> tuple:
    """The checked template, parameters and environment, and the sweep's name (a new one unless
    given)."""
    params = parse_params(args.param)
    slurm_only(args)
    if not params:
        raise FlopscopeError(
            "sweep",
            "no --param given",
            "e.g. --param batch_size=1,8,16 -- python x.py {batch_size}",
        )
    if args.resume and not args.sweep_name:
        raise FlopscopeError(
            "--resume",
            "which sweep? a new sweep gets a new name, so nothing would be resumed",
            "pass --sweep-name NAME (`flopscope runs` lists the sweeps)",
        )
    cwds: list[str | None] | None = (
        [substitute([args.remote_cwd], point)[0] for point in points(params)]
        if args.remote_cwd
        else None
    )
    template, env = checked_options(args, cwds)
    _check_new_sweep(args.sweep_name, args.resume)
    for name in unused_params(template.command, params, env, args.remote_cwd):
        say(
            f"flopscope: warning: no argument uses {{{name}}} (nor --env, nor --remote-cwd): its"
            " values would never reach the program"
        )
    with open_store() as store:
        sweep = args.sweep_name or store.new_sweep(time.strftime("sweep-%Y%m%d-%H%M%S"))
    return template, params, env, sweep


def _summarise(results: list, params: dict, sweep: str) -> int:
    """One line for the sweep, one per point whose numbers may lie; the exit code."""
    stored = sum(r.status == "stored" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    total = len(points(params))
    failed = total - stored - skipped  # a point with no result at all counts as failed too
    suspect = [r for r in results if r.status == "stored" and r.suspect]
    misjudged = [r for r in results if r.status == "stored" and r.gpu_refused and not r.suspect]
    # A --metrics name ncu 2025.3 profiled past: each point's line said so; the sweep exits 1 as
    # profile does.
    unknown = [
        r
        for r in results
        if r.status == "stored" and r.unknown_metrics and not r.suspect and not r.gpu_refused
    ]
    warned = len(suspect) + len(misjudged) + len(unknown)
    say(
        f"flopscope: sweep {sweep}: {stored + skipped} of {total} point(s) stored"
        + (f" ({skipped} by an earlier run)" if skipped else "")
        + (f", {failed} failed" if failed else "")
        + (f", {warned} with a warning" if warned else "")
    )
    for r in suspect:  # a crash or OOM at one size must not pass for a clean point in the fits
        say(
            f"flopscope: warning: {fmt.params(r.params)} (run {r.run}) is in the analysis although"
            f" {r.suspect}: check it before trusting the fits"
        )
    if misjudged:  # its own GPU judges it: what --gpu asked for was not done
        say(
            f"flopscope: warning: {len(misjudged)} point(s) judged against their own GPU, not"
            f" --gpu: {misjudged[0].gpu_refused}"
        )
    return 2 if failed and not stored + skipped else 1 if failed or warned else 0


def _lines(sweep: str, tell=say) -> list[Slice]:
    """The stored sweep's lines for the analysis, or none; `tell` hears the lines to print (a
    damaged run)."""
    try:
        with Store() as store:
            return slices(
                sweep_points(sweep, store, lambda m: tell(f"flopscope: warning: {m}")),
                f"sweep {sweep}",
            )
    except FlopscopeError as exc:
        tell(f"flopscope: {exc.problem}: runs stored, no scaling analysis")
        return []


def _check_new_sweep(sweep: str | None, resume: bool) -> None:
    """A --sweep-name already stored, without --resume, is refused before anything runs: its points
    would be stored a second time beside the first, each value measured twice. No store yet: no
    sweep is taken."""
    if not sweep or resume or not (data_home() / "flopscope.db").exists():
        return
    with Store() as store:
        if store.is_sweep(sweep):
            stored = len(store.runs(sweep))
            raise FlopscopeError(
                f"--sweep-name {sweep}",
                f"a sweep of this name is stored already ({stored} point(s))",
                "pass --resume to continue it (only the points it lacks are profiled), or choose"
                " another --sweep-name",
            )


def _run(args, template, params: dict, env: dict, sweep: str) -> list:
    """Profile every point with a progress bar (a terminal) or one line per point (a pipe)."""
    total = len(points(params))
    transports, opened = _transports(args, total)
    done = [0]
    err = Console(stderr=True, highlight=False)
    bar = Progress(
        TextColumn("sweep {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not sys.stderr.isatty(),
    )
    task = bar.add_task(sweep, total=total)

    def progress(line: str) -> None:
        (bar.console.print(Text(display_text(line))) if sys.stderr.isatty() else say(line))

    def on_point(result) -> None:
        done[0] += 1
        bar.advance(task)
        what = {
            "stored": f"stored as {result.run}",
            "skipped": "already stored, skipped",
            "failed": f"FAILED: {result.error}",
        }[result.status]
        if result.notes:  # the program's exit code, a partial report: said on the point's own line
            what += f" ({'; '.join(result.notes)})"
        where = f" on {result.host}" if result.host else ""
        progress(f"[{done[0]}/{total}] {fmt.params(result.params)}{where}: {what}")

    def on_event(host, event) -> None:
        if event.kind == "kernel":
            progress(f"    {host}: {describe(event)}")

    def on_state(point, host, state) -> None:
        progress(f"    {fmt.params(point)}: {state.text}")

    def on_host_lost(host, reason) -> None:
        progress(
            f"flopscope: dropped host {host} for the rest of the sweep ({reason}); the other hosts"
            " take its points"
        )

    try:
        with bar:
            return run_sweep(
                template,
                params,
                transports,
                sweep,
                resume=args.resume,
                env=env,
                cwd=args.remote_cwd,
                gpu=args.gpu,
                on_point=on_point,
                on_event=on_event,
                on_state=on_state,
                on_host_lost=on_host_lost,
            )
    # the points under way were stopped and their unfinished run folders removed
    except KeyboardInterrupt:
        say(
            f"flopscope: sweep {sweep} stopped; `flopscope sweep --resume --sweep-name {sweep} ...`"
            " profiles the points not stored yet"
        )
        raise
    finally:
        for t in opened:
            t.close()


def _transports(args, total: int) -> tuple[list, list]:
    """What run_sweep spreads the points over, and what to close afterwards: a transport per --host
    (or this machine); with --slurm, one Slurm transport per job kept submitted at once, all through
    the one login node (or this machine)."""
    options = _slurm_options(args) if args.slurm else None
    hosts = args.host or [None]
    direct = [
        (
            SshTransport(h, connect_timeout=args.connect_timeout, ssh_config=args.ssh_config)
            if h
            else LocalTransport()
        )
        for h in hosts
    ]
    if options is None:
        return direct, direct
    jobs = [SlurmTransport(direct[0], options) for _ in range(min(total, JOBS_AT_ONCE))]
    try:
        jobs[0].connect()  # an unknown partition, account or time: refused before any point runs
    except FlopscopeError:
        direct[0].close()
        raise
    return jobs, direct


def _slurm_options(args) -> SlurmOptions:
    if len(args.host) > 1:
        raise FlopscopeError(
            "--slurm",
            f"the jobs are submitted through one login node, and --host is given {len(args.host)}"
            " times",
            "pass --host once (the scheduler spreads the points)",
        )
    try:
        extra = shlex.split(args.sbatch_args)
    except ValueError as err:
        raise FlopscopeError(
            f"--sbatch-args {args.sbatch_args}",
            f"cannot be split into arguments ({err})",
            "quote it as a shell would, e.g. --sbatch-args '--qos=debug'",
        ) from None
    return SlurmOptions(args.partition, args.gres, args.time, args.account, extra)


def slurm_only(args) -> None:
    """--partition, --gres, --time, --account and --sbatch-args without --slurm would be ignored:
    refused."""
    given = [
        name
        for name in ("partition", "gres", "time", "account", "sbatch_args")
        if getattr(args, name)
    ]
    if given and not args.slurm:
        flag = "--" + given[0].replace("_", "-")
        raise FlopscopeError(
            flag,
            "is an sbatch option, and this sweep does not use Slurm",
            f"add --slurm to submit each point as a Slurm job, or leave {flag} out",
        )


def _from_sources(args) -> list[Slice]:
    pattern = _regex(args.param_from_name) if args.param_from_name else None
    param = args.param[0].split("=")[0] if args.param else "param"
    store = None
    pts = []
    stored: dict[str, Any]  # the run's stored parameters ({} for a file)
    with ExitStack() as opened:  # the store is opened for the first stored run named, if any
        for source in args.sources:
            if Path(source).exists():
                report, name, stored = read_report(source, gpu=args.gpu), Path(source).name, {}
            else:  # a stored run, by name or id
                store = store or opened.enter_context(Store())
                name, stored = _stored_run(store, source)
                report = with_gpu(store.load(source), args.gpu) if args.gpu else store.load(source)
            pts.append((_value(name, stored, pattern, param, source), report))
            if stored and not args.param:
                param = next(iter(stored))
    return [Slice(param, {}, pts)] if pts else []


def _stored_run(store: Store, ref: str) -> tuple[str, dict[str, Any]]:
    """A stored run's name and parameters; a sweep's name is told apart from a typo (--from takes
    runs)."""
    try:
        return store.named_params(ref)
    except FlopscopeError:
        if "/" in ref or ref.endswith((".ncu-rep", ".csv")):  # meant as a file, as `open PATH` says
            raise FlopscopeError(
                ref,
                "no such file (nor a stored run of that name)",
                "check the path (`flopscope runs` lists the stored runs)",
            ) from None
        if not store.is_sweep(ref):
            raise
        raise FlopscopeError(
            f"--from {ref}",
            "a sweep, not a run: --from takes stored runs or report files",
            f"`flopscope open {ref}` shows the sweep (`flopscope runs --sweep {ref}` lists its"
            " runs)",
        ) from None


def judged_against(lines: list[Slice], gpu: str | None) -> str | None:
    """The GPU whose datasheet ceilings judge the points when --gpu was given (every point got it),
    else None: the output says so, as `open RUN --gpu` does, so no one reads the points' own GPU's
    efficiencies."""
    spec = find_gpu(gpu)
    if spec is None:
        return None
    # A point of another compute capability keeps its own GPU (`sweep --gpu` says so per point): not
    # this one.
    used = {
        getattr(g, "key", None)
        for _, report in (p for line in lines for p in line.points)
        for g in [report.gpu, *(report.gpus or {}).values()]
    }
    return spec.name if spec.key in used else None


def _regex(text: str) -> re.Pattern:
    try:
        return re.compile(text)
    except re.error as err:
        raise FlopscopeError(
            f"--param-from-name '{text}'",
            f"not a regular expression ({err})",
            r"use a regex with one group that captures the value, e.g. 'bs(\d+)'",
        ) from None


def _value(name: str, stored: dict, pattern, param: str, source: str) -> float:
    if pattern is not None:
        m = pattern.search(name)
        if not m:
            # The pattern as typed, not its repr (which doubles every backslash).
            raise FlopscopeError(
                source,
                f"--param-from-name '{pattern.pattern}' does not match the name",
                "use a regex with one group that captures the value, e.g. 'bs(\\d+)'",
            )
        return _number(m.group(1) if m.groups() else m.group(0))
    if stored:
        return _number(stored.get(param, next(iter(stored.values()))))
    raise FlopscopeError(
        source, "no parameter value for this file", r"pass --param-from-name REGEX, e.g. 'bs(\d+)'"
    )


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise FlopscopeError(
            f"value {text!r}",
            "a sweep parameter must be a number to be analysed",
            "sweep numeric values (batch sizes, sequence lengths)",
        ) from None


def _show(name: str, lines: list[Slice], args, results: list | None = None) -> None:
    if args.json:
        out = sweep_json(
            name, lines, args.tolerance, judged_against(lines, getattr(args, "gpu", None))
        )
        if results is not None:  # profiled now: how each point went, with its notes
            out["runs"] = [
                {
                    "params": r.params,
                    "status": r.status,
                    "run": r.run,
                    "host": r.host,
                    "error": r.error,
                    "notes": r.notes,
                    "suspect": r.suspect,
                }
                for r in results
            ]
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    out_console = console()
    judged = judged_against(lines, getattr(args, "gpu", None))
    if judged:
        out_console.print(Text(display_text(f"judged against {judged} ceilings (--gpu)")))
    for line in lines:
        if len(lines) > 1 or line.fixed:
            out_console.print(Text(f"\n{display_text(line.label)}", style="bold"))
        _print_analysis(line.param, analyse(line.points, line.param, args.tolerance), out_console)


def _print_analysis(param: str, analysis: Analysis, out_console) -> None:
    """The Sweep screen's per-point table (its columns, the Warning one included), fitted to the
    terminal as the kernel table is; then the fits and the findings."""
    table = analysis.table
    columns = sweep_columns(param, bool(table["warning"].any()))
    cells = [
        [col.render(values[col.name]) for col in columns] for values in table.to_dict("records")
    ]
    # The Warning column (never dropped) is the one cut to fit, never the numbers; the findings
    # below give each warning whole.
    names = [col.name for col in columns]
    flex = names.index("warning") if "warning" in names else None
    out, hidden = fitted_table(
        specs(columns), cells, out_console.width, flex=flex, flex_min=WARNING_CELLS
    )
    out_console.print(out)
    print_hidden(out_console, hidden)
    for name, title, text in FITTED:
        out_console.print(Text(fit_line(title, analysis.fits[name], param, text)))
    for note in analysis.notes:
        out_console.print(Text(f"! {display_text(note)}", style="bold"))  # a finding names kernels
