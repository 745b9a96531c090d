"""`flopscope profile`: options mirror ncu's own names; the command follows `--`, untouched."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time

from flopscope.core import FlopscopeError
from flopscope.core.ncu_command import METRIC_SETS, REPLAY_MODES, ProfileOptions
from flopscope.core.ncu_progress import Event
from flopscope.core.profiler import profile
from flopscope.core.runs import new_run_dir
from flopscope.core.store import Store
from flopscope.core.transport import LocalTransport, SshTransport, check_env

from .text_report import console, missing_lines, print_report, report_json


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """Options before the first `--`, the profiled command after it (never re-parsed)."""
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1:]
    return argv, []


def add_profile_args(p: argparse.ArgumentParser, many_hosts: bool = False) -> None:
    if many_hosts:
        p.add_argument("--host", action="append", default=[],
                       help="run on HOST through ssh; repeat to spread points over hosts, one at a time each")
    else:
        p.add_argument("--host", help="run on HOST through the system ssh (its ~/.ssh/config applies)")
    p.add_argument("--ssh-config", metavar="FILE", help="an ssh config file to use instead of ~/.ssh/config")
    p.add_argument("--connect-timeout", type=int, default=10, metavar="S", help="ssh connect timeout (default 10)")
    p.add_argument("--ncu", default="ncu", metavar="PATH", help="ncu on the target (default: ncu on PATH)")
    p.add_argument("--remote-cwd", metavar="DIR", help="working directory of COMMAND on the target")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment for COMMAND (repeat)")
    p.add_argument("--metrics", default="roofline", metavar="SET",
                   help=f"{'|'.join([*METRIC_SETS, 'full'])}|NAME,... (default: roofline)")
    p.add_argument("-k", "--kernel-name", metavar="FILTER", help="ncu's kernel filter, e.g. regex:gemm")
    p.add_argument("--nvtx-include", action="append", default=[], metavar="EXPR", help="ncu's NVTX filter (repeat)")
    p.add_argument("--launch-skip", type=int, metavar="N")
    p.add_argument("--launch-count", type=int, metavar="N")
    p.add_argument("--replay-mode", choices=REPLAY_MODES)
    p.add_argument("--clock-control", choices=("base", "none"))
    p.add_argument("--target-processes", choices=("all", "application-only"))
    p.add_argument("--ncu-args", default="", metavar="ARGS", help="extra ncu arguments, as one string")
    p.add_argument("--name", metavar="RUN", help="run name (default: time and program name)")
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings")
    p.add_argument("--no-tui", action="store_true", help="print progress and the final table instead of the app")
    p.add_argument("--json", action="store_true", help="with --no-tui: print the final report as JSON")


def options_from(args) -> ProfileOptions:
    return ProfileOptions(
        command=list(args.child_command), metrics=args.metrics, kernel_name=args.kernel_name,
        nvtx_include=args.nvtx_include, launch_skip=args.launch_skip, launch_count=args.launch_count,
        replay_mode=args.replay_mode, clock_control=args.clock_control, target_processes=args.target_processes,
        ncu_args=shlex.split(args.ncu_args), ncu=args.ncu)


def parse_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise FlopscopeError(f"--env {pair}", "expected NAME=VALUE", "e.g. --env CUDA_VISIBLE_DEVICES=0")
        env[name] = value
    return env


def transport_from(args):
    if args.host:
        return SshTransport(args.host, connect_timeout=args.connect_timeout, ssh_config=args.ssh_config)
    return LocalTransport()


class Progress:
    """One line per ncu event on stderr; the program's own output passes through."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self, event: Event) -> None:
        stamp = f"[{time.monotonic() - self.start:6.1f}s]"
        if event.kind == "kernel":
            passes = f" ({event.passes} passes)" if event.passes else ""
            line = f"{stamp} kernel {event.index}: {event.name}{passes}"
        elif event.kind in ("error", "warning"):
            line = f"{stamp} ncu {event.kind}: {event.text}"
        elif event.kind == "output":
            line = event.text
        else:
            line = f"{stamp} {event.text.removeprefix('==PROF== ')}"
        print(line, file=sys.stderr, flush=True)


def cmd_profile(args) -> int:
    opts = options_from(args)
    env = parse_env(args.env)
    check_env(env)
    if not opts.command:
        raise FlopscopeError("profile", "no command to profile", "put it after `--`: flopscope profile -- python x.py")
    run_dir = new_run_dir(args.name, opts.command)
    if not args.no_tui and sys.stdout.isatty() and not args.json:
        return _profile_in_app(args, opts, env, run_dir)
    print(f"flopscope: profiling on {args.host or 'localhost'}; run folder {run_dir}", file=sys.stderr)
    result = _profile_and_store(args, opts, env, run_dir, Progress())
    for note in result.notes:
        print(f"flopscope: {note}", file=sys.stderr)
    report = result.report
    for line in missing_lines(report):
        print(line, file=sys.stderr)
    rows = report.group("name")
    if args.json:
        doc = report_json(report, rows)
        doc["meta"]["run_dir"] = str(run_dir)
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_report(report, rows, console())
    return 0


def _profile_and_store(args, opts: ProfileOptions, env: dict, run_dir, on_event, on_process=lambda p: None):
    """Profile, then keep the run in the store; the transport is closed whatever happens."""
    transport = transport_from(args)
    try:
        result = profile(opts, transport, run_dir, on_event=on_event, env=env, cwd=args.remote_cwd, gpu=args.gpu,
                         on_process=on_process)
    finally:
        transport.close()
    store = Store()
    name = store.unique_name(run_dir.name)
    store.save(result.report, name, host=transport.host, command=opts.command)
    result.notes.append(f"stored as run {name} ({store.path})")
    return result


def _profile_in_app(args, opts: ProfileOptions, env: dict, run_dir) -> int:
    from .app import run_app
    from .screens.profile import ProfileScreen

    title = f"ncu on {args.host or 'localhost'}: {shlex.join(opts.command)}  ·  run folder {run_dir}"
    screen = ProfileScreen(lambda on_event, on_process: _profile_and_store(args, opts, env, run_dir, on_event,
                                                                             on_process), title)
    return run_app(run_dir / "report.ncu-rep", gpu=args.gpu, live=screen)
