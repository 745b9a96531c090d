"""`flopscope`: the command line. Every view has a non-interactive form (table or JSON).

This module parses the arguments (args.py) and runs the command's function, imported only then
(COMMANDS)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from importlib import import_module

from ...core.common import (  # light; imported before memory runs out
    FlopscopeError,
    out_of_memory,
    path_error,
    ran_out_of_memory,
)
from ..presentation.messages import say, say_error
from .args import build_parser, split_command
from .import_guards import collector_paused, stop_signals_blocked
from .output_cache import run_recorded

__all__ = ["COMMANDS", "build_parser", "bundled_example", "main", "parsed"]


def _exists(path: str) -> bool:
    """Whether `path` names a file or folder, one behind a folder we may not enter included: reading
    it then says "permission denied", where os.path.exists would send it to the store as a run
    name."""
    try:
        os.stat(path)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return True


def _bundled() -> list:
    """The example reports shipped in the package (tui/examples/), captured by the project on a real
    GPU."""
    from importlib.resources import files

    return sorted(
        p
        for p in files("flopscope.tui").joinpath("examples").iterdir()
        if p.name.endswith((".ncu-rep", ".ncu-rep.xz"))
    )


def bundled_example() -> str:
    """The example report shipped in the package, or the one-line error that there is none yet."""
    found = _bundled()
    if not found:
        raise FlopscopeError(
            "demo",
            "this build has no bundled example (tui/examples/ was left out of the package)",
            "reinstall flopscope, or open a report: flopscope report FILE.ncu-rep",
        )
    return str(found[0])


# Command -> the module (of this package) and function that run it. A command's module is imported
# only when it runs: `--help`, `--version`, `gpus` and a usage error start without pandas, pyarrow
# and Textual.
COMMANDS = {
    "report": ("view", "cmd_report"),
    "export": ("export", "cmd_export"),
    "open": ("view", "cmd_open"),
    "demo": ("view", "cmd_demo"),
    "gpus": ("gpus", "cmd_gpus"),
    "roofline": ("roofline", "cmd_roofline"),
    "profile": ("profile", "cmd_profile"),
    "runs": ("runs", "cmd_runs"),
    "diff": ("runs", "cmd_diff"),
    "import": ("runs", "cmd_import"),
    "recover": ("runs", "cmd_recover"),
    "sweep": ("sweep", "cmd_sweep"),
    "model": ("model", "cmd_model"),
    "reconcile": ("model", "cmd_reconcile"),
    "check": ("check", "cmd_check"),
    "doctor": ("doctor", "cmd_doctor"),
    "ceilings": ("ceilings", "cmd_ceilings"),
    "serve": ("serve", "cmd_serve"),
}


def parsed(argv: list[str]) -> argparse.Namespace:
    """The command's arguments. `flopscope PATH` and `flopscope -` mean `open`; a missing file that
    was meant as one is a FlopscopeError, where argparse would answer with the list of commands."""
    if argv and argv[0] == "-":
        argv = ["open", *argv]  # `ncu --csv ... | flopscope -`: the table, as for a file
    elif argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        if _exists(argv[0]):
            argv = ["open", *argv]  # `flopscope PATH` opens the app
        # meant as a file: "invalid choice" would name the commands
        elif "." in argv[0] or "/" in argv[0]:
            raise FlopscopeError(
                argv[0], "no such file", "check the path (`flopscope --help` lists the commands)"
            )
    parser = build_parser()
    # `--` ends flopscope's options before the program profile and sweep run; elsewhere it is
    # argparse's own end of options (`report -- -dash.csv`)
    argv, command = split_command(argv) if argv[:1] in (["profile"], ["sweep"]) else (argv, [])
    args, unknown = parser.parse_known_args(argv)
    # from the command's own parser, so the message points to its --help, not flopscope's
    if unknown:
        _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    args.child_command = command
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parsed(argv)
    except FlopscopeError as err:
        return _refused(err)
    restore = _stop_on_signals()
    try:
        module, name = COMMANDS[args.command]
        # The command's imports start native threads (pyarrow, BLAS), which must not take a stop
        # signal (entry.py), and make many objects the cycle collector need not walk
        # (import_guards.py).
        with stop_signals_blocked(), collector_paused():
            run = getattr(import_module(f".{module}", __package__), name)
            if getattr(args, "no_cache", False):
                from ...core.common.home import NO_CACHE_ENV

                # read_metrics checks it; also passed on to anything flopscope starts
                os.environ[NO_CACHE_ENV] = "1"
        return run_recorded(argv, _prints_only(args), lambda: run(args))
    except FlopscopeError as err:
        return _refused(err)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        # imported already if it started anything
        from ...core.profiling import stop_all, stopped_running_job

        stop_all()
        # Only where a running ncu was stopped: `report FIFO` stopped while reading has none to
        # speak of.
        stopped = (
            " (ncu and the program it profiled were stopped too)" if stopped_running_job() else ""
        )
        say(f"flopscope: stopped{stopped}")
        return 130
    except Exception as exc:
        # outside a reader (they name their file): still one line, exit 2
        if ran_out_of_memory(exc):
            return _refused(out_of_memory(getattr(args, "path", None) or args.command))
        # a path no reader opened (a run folder's)
        if isinstance(exc, OSError) and exc.filename is not None:
            say(f"flopscope: {path_error(exc.filename, exc).line()}")
            return 2
        raise
    finally:
        restore()


def _prints_only(args: argparse.Namespace) -> bool:
    """Whether the command only prints what it read from a regular file (not stdin, a pipe, a
    folder or a stored run): its output may be kept (output_cache.py)."""
    if args.command == "report":
        return args.output is None and _regular(args.path)
    if args.command == "demo" or (args.command == "open" and _regular(args.path)):
        from .runs import interactive

        return not interactive(args)
    return False


def _regular(path: str) -> bool:
    return path != "-" and os.path.isfile(path)


def _refused(err: FlopscopeError) -> int:
    """The command's one line for `err`, and its exit status."""
    say_error(err)
    return 2


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _stop_on_signals():
    """SIGTERM and SIGHUP (the SSH session went away) end flopscope like Ctrl-C does: every ncu it
    started, and the program under it, here or on a remote host, is stopped first. Returns what
    undoes this."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum, frame):
        # Once, first thing: the same stop sent twice (to the process and its group; the watcher
        # passes on what kill(2) sent it) must not cut the first short, nor land in the import below
        # half done.
        for sig in before:
            signal.signal(sig, signal.SIG_IGN)
        from ...core.profiling import stop_all

        stop_all()
        raise KeyboardInterrupt

    def restore() -> None:
        for sig, handler in before.items():
            # after a stop it stays ignored: a late second copy would end us
            if signal.getsignal(sig) is stop:
                signal.signal(sig, handler)

    # A signal the command was started with ignored (`nohup flopscope sweep ...`) stays ignored.
    taken = [
        sig
        for sig in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(sig) is not signal.SIG_IGN
    ]
    before = {sig: signal.signal(sig, stop) for sig in taken}
    return restore
