"""`flopscope profile`: options mirror ncu's own names; the command follows `--`, untouched."""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path

from ...core import FlopscopeError
from ...core.common import data_home, require_gpu
from ...core.ncu import TIMING_LIMIT_S, Event, ProfileOptions, describe, ncu_argv
from ...core.profiling import (
    LocalTransport,
    ProfileResult,
    SshTransport,
    check_env,
    check_host,
    cost_line,
    local_ncu_found,
    profile,
    stop_all,
)
from ...core.store import Store, StoreError, check_run_name, discard_unfinished, new_run_dir
from ..presentation.text_report import console, print_report, report_json, say
from ..presentation.warnings import warning_lines


def options_from(args) -> ProfileOptions:
    try:
        ncu_args = shlex.split(args.ncu_args)
    except ValueError as err:
        raise FlopscopeError(
            f"--ncu-args {args.ncu_args}",
            f"cannot be split into arguments ({err})",
            "close the quote: the value is split like a shell would, e.g. --ncu-args '--section"
            ' "Speed Of Light"\'',
        ) from None
    return ProfileOptions(
        command=list(args.child_command),
        metrics=args.metrics,
        kernel_name=args.kernel_name,
        nvtx_include=args.nvtx_include,
        launch_skip=args.launch_skip,
        launch_count=args.launch_count,
        replay_mode=args.replay_mode,
        clock_control=args.clock_control,
        target_processes=args.target_processes,
        ncu_args=ncu_args,
        ncu=args.ncu,
        modules=args.modules,
        timing=not getattr(args, "no_timing", False),
        timing_limit_s=getattr(args, "timing_limit", None) or TIMING_LIMIT_S,
    )


def checked_options(
    args, cwds: list[str | None] | None = None
) -> tuple[ProfileOptions, dict[str, str]]:
    """The profile options and environment, or the one-line error, before anything runs or is
    written (no run folder, no ssh connection). `cwds`: the working directories the command will get
    (a sweep substitutes each point's values); default: --remote-cwd."""
    # stored as typed, as its folder's name (a sweep has no --name)
    if getattr(args, "name", None) is not None:
        check_run_name(args.name, f"--name {args.name}")
    if getattr(args, "sweep_name", None) is not None:  # `open NAME` looks for a sweep first
        check_run_name(args.sweep_name, f"--sweep-name {args.sweep_name}", "--sweep-name", "sweep")
    _check_names_apart(getattr(args, "name", None), getattr(args, "sweep_name", None))
    opts = options_from(args)
    if not opts.timing and not opts.modules:
        raise FlopscopeError(
            "--no-timing", "skips the timing run, which only --modules makes", "leave it out"
        )
    limit = getattr(args, "timing_limit", None)
    if limit is not None and not (opts.modules and opts.timing):
        raise FlopscopeError(
            f"--timing-limit {limit:g}",
            "limits the timing run, which only --modules makes (and --no-timing skips)",
            "leave it out",
        )
    env = parse_env(args.env)
    check_env(env)
    if not opts.command:
        raise FlopscopeError(
            args.command,
            "no command to profile",
            f"put it after `--`: flopscope {args.command} -- python x.py",
        )
    if not opts.ncu.strip():
        raise FlopscopeError(
            "--ncu ''", "an empty path", "leave --ncu out for ncu on PATH, or pass where it is"
        )
    # the command line ncu would get: a bad --metrics, --ncu-args or command fails here
    ncu_argv(opts, "report")
    if args.gpu:  # its compute capability against the report's is known only once ncu has run
        require_gpu(args.gpu)
    _check_ssh(args.host, args.ssh_config)
    if not args.host:  # this machine: what would fail only once ncu is launched can be checked now
        # --plan runs nothing: it says itself where ncu is not found
        _check_local(
            opts.ncu,
            args.remote_cwd if cwds is None else cwds,
            needs_ncu=not getattr(args, "plan", False),
        )
    return opts, env


def _check_names_apart(name: str | None, sweep: str | None) -> None:
    """A run named as a stored sweep, or a sweep named as a stored run, refused before ncu runs (see
    Store.check_names_apart). No store yet: no name is taken, and none is created here."""
    if not (name or sweep) or not (data_home() / "flopscope.db").exists():
        return
    with Store() as store:
        store.check_names_apart(name, sweep, f"--name {name}", f"--sweep-name {sweep}")


def _check_ssh(hosts: list[str] | str | None, ssh_config: str | None) -> None:
    """What ssh would refuse, refused before a run folder is made (an unreachable host is known only
    later)."""
    for host in [hosts] if isinstance(hosts, str) else hosts or []:
        check_host(host)
    if ssh_config is not None and not (
        os.path.isfile(ssh_config) and os.access(ssh_config, os.R_OK)
    ):
        why = "not a readable file" if os.path.exists(ssh_config) else "no such file"
        raise FlopscopeError(
            f"--ssh-config {ssh_config}",
            why,
            "pass an ssh config file, or leave --ssh-config out for ~/.ssh/config",
        )


def _check_local(ncu: str, cwds: list[str | None] | str | None, needs_ncu: bool = True) -> None:
    cwds = [cwds] if not isinstance(cwds, list) else cwds
    for cwd in cwds:
        if cwd and not os.path.isdir(cwd):
            raise FlopscopeError(
                f"--remote-cwd {cwd}",
                "no such folder on this machine",
                "pass an existing folder: it is the working directory of the command",
            )
    if needs_ncu and not local_ncu_found(ncu, cwds):
        raise FlopscopeError(
            f"--ncu {ncu}",
            "ncu not found on this machine, or not an executable file (searched PATH)",
            "pass --ncu /usr/local/cuda/bin/ncu (or wherever Nsight Compute is installed)",
        )


def open_store() -> Store:
    """The run store, opened and write-locked once before a profile: a profile it could not keep is
    not run."""
    store = Store()
    try:
        store.check_writable()
    except StoreError:
        store.close()
        raise
    return store


def parse_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise FlopscopeError(
                f"--env {pair}", "expected NAME=VALUE", "e.g. --env CUDA_VISIBLE_DEVICES=0"
            )
        env[name] = value
    return env


def transport_from(args):
    if args.host:
        return SshTransport(
            args.host, connect_timeout=args.connect_timeout, ssh_config=args.ssh_config
        )
    return LocalTransport()


class Progress:
    """One line per ncu event on stderr; the program's own output passes through."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self, event: Event) -> None:
        line = describe(event)
        if event.kind != "output":  # the program's own lines pass through as it printed them
            line = f"[{time.monotonic() - self.start:6.1f}s] {line}"
        say(line)


def cmd_profile(args) -> int:
    opts, env = checked_options(args)
    if args.plan:
        from .plan import cmd_plan

        return cmd_plan(args, opts, transport_from(args))
    open_store().close()
    in_app = not args.no_tui and sys.stdout.isatty() and not args.json
    if in_app:
        from ..app.keymap import load_keymap

        load_keymap()  # a bad [keymap] file is refused before a run folder is made for nothing
    run_dir = new_run_dir(args.name, opts.command)
    if in_app:
        return _profile_in_app(args, opts, env, run_dir)
    say(f"flopscope: profiling on {args.host or 'localhost'}; run folder {run_dir}")
    try:
        result = _profile(args, opts, env, run_dir, Progress())
    # Ctrl-C or SIGTERM: ncu is stopped and its work folder removed by now
    except KeyboardInterrupt:
        stop_all()
        _say_stopped(run_dir)
        raise
    stored = _store(result, args, opts)
    say(f"flopscope: {cost_line(result)}")
    for note in result.notes:
        say(f"flopscope: {note}")
    report = result.report
    for line in warning_lines(report):
        say(line)
    rows = report.group("name")
    if args.json:
        doc = report_json(report, rows)
        doc["meta"]["run_dir"] = str(run_dir)
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_report(report, rows, console())
    return exit_code(result, stored)


def exit_code(result: ProfileResult, stored: bool) -> int:
    """0: stored cleanly; 1: stored with a warning (the program exited non-zero, the report is
    partial, --gpu did not fit), as `sweep` says of such a point; 2: not stored (a note says why and
    where the run folder is)."""
    return 2 if not stored else 1 if result.warned else 0


def _profile(
    args, opts: ProfileOptions, env: dict, run_dir: Path, on_event, on_process=lambda p: None
):
    """Profile; the transport is closed whatever happens, and a run folder that got no report is
    removed, so its name is free again (a stop says so itself: _say_stopped)."""
    try:
        transport = transport_from(args)
        try:
            return profile(
                opts,
                transport,
                run_dir,
                on_event=on_event,
                env=env,
                cwd=args.remote_cwd,
                gpu=args.gpu,
                on_process=on_process,
            )
        finally:
            transport.close()
    except Exception:
        discard_unfinished(run_dir)
        raise


def _store(result: ProfileResult, args, opts: ProfileOptions) -> bool:
    """Keep the run in the store; a note says under which name, or why not and how to get at the run
    folder (left as it is)."""
    run_dir = result.run_dir
    assert result.report is not None  # profile() returns only with its report (it raises otherwise)
    try:
        with Store() as store:
            name = store.save_unique(
                result.report, run_dir.name, host=args.host or "localhost", command=opts.command
            )
        result.notes.append(f"stored as run {name} ({store.path})")
        return True
    except StoreError as err:
        result.notes.append(
            f"{err.line()}; the run is kept in {run_dir}: `flopscope import {run_dir}` stores it "
            f"once that is fixed, `flopscope open {run_dir / 'report.ncu-rep'}` opens it now"
        )
        return False


STOPPED = 130  # the shell's code for a command stopped by the user (128 + SIGINT)


def _profile_in_app(args, opts: ProfileOptions, env: dict, run_dir: Path) -> int:
    from ..app.launch import run_kernels
    from ..app.screens.profile import ProfileScreen

    finished = threading.Event()
    outcome: list[int] = []  # the exit code of a profile that came back

    def job(on_event, on_process) -> ProfileResult:
        def started(process) -> None:
            on_process(process)
            # stopped before ncu started: it must not run on behind the user's back
            if screen.stopped:
                process.terminate()

        try:
            result = _profile(args, opts, env, run_dir, on_event, started)
            if not screen.stopped:  # a stopped profile is not stored, whatever came back
                outcome.append(exit_code(result, _store(result, args, opts)))
            return result
        finally:
            finished.set()

    title = (
        f"ncu on {args.host or 'localhost'}: {shlex.join(opts.command)}  ·  run folder {run_dir}"
    )
    screen = ProfileScreen(job, title)
    code = run_kernels(run_dir / "report.ncu-rep", gpu=args.gpu, live=screen)
    if not screen.stopped:
        return code or (outcome[0] if outcome else 0)
    # ncu was told to stop; the job still cleans up its remote work folder
    if not finished.wait(timeout=30):
        say(
            f"flopscope: profile stopped; run folder {run_dir} left as it is (ncu did not end in"
            " 30 s)"
        )
    else:
        _say_stopped(run_dir)
    return STOPPED


def _say_stopped(run_dir: Path) -> None:
    """A stopped profile is not stored: its folder goes (its name is free again) unless a report
    came back."""
    if discard_unfinished(run_dir):
        say(f"flopscope: profile stopped; nothing was kept (run folder {run_dir} removed)")
    else:
        say(
            f"flopscope: profile stopped, not stored; its report is in {run_dir}: "
            f"`flopscope open {run_dir / 'report.ncu-rep'}`"
        )
