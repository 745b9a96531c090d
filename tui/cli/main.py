"""`flopscope`: the command line. Every view has a non-interactive form (table or JSON)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import NoReturn

from rich.text import Text

from ... import __version__
from ...core import FlopscopeError, all_gpus, read_report
from ...core.columns import NEEDS
from ...core.counters import missing_fix
from ...core.export import records, run_meta, write_table
from ...core.report import GROUPINGS, Report, with_gpu
from ...core.scaling import load_sweep
from ...core.store import Store
from ...core.table_cache import NO_CACHE_ENV
from ...core.transport import stop_all, stopped_running_job
from ..presentation.text_report import (
    Spec,
    console,
    fitted_table,
    print_hidden,
    print_report,
    print_warning,
    say,
    sort_column,
    warning_lines,
)
from .profile import add_profile_args, cmd_profile, split_command, whole
from .runs import add_runs_commands, interactive
from .sweep import _show, add_sweep_command, judged_against


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line, like every other input error (argparse would print its usage block too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}; see `{self.prog} --help`\n")


def _view_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="an .ncu-rep report or ncu CSV (raw or details page)")
    p.add_argument("--by", choices=list(GROUPINGS), default="name", help="group rows (default: name)")
    p.add_argument("--sort", metavar="COLUMN", help="sort by a column: a title of the table (Time, FLOP, %%Peak, "
                   "...; any case) or a key of the --json rows (flop_fp32, l2_bytes, ...), shown while sorted by it; "
                   "unknown values last either way (default: Time)")
    p.add_argument("--asc", action="store_true", help="sort ascending")
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings (see `flopscope gpus`)")
    _no_cache_arg(p)


def _no_cache_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true", help="read the report afresh, not from the table cache "
                   "(a report of 1 MB or more is read once, its table kept as Parquet in the data folder)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="flopscope", description=__doc__)
    parser.add_argument("--version", action="version", version=f"flopscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("report", help="print the kernel table of a report")
    _view_args(p)
    p.add_argument("--top", type=whole(1, "leave it out for every row"), metavar="N",
                   help="only the first N rows (N >= 1)")
    p.add_argument("--all", action="store_true", help=f"print every row; a table of more than {TABLE_ROWS} rows "
                   f"(--by launch of a long run) otherwise shows its first {TABLE_ROWS} and says how many it left out")
    p.add_argument("--json", action="store_true", help="one JSON object: meta and rows")

    p = sub.add_parser("export", help="write the kernel table to CSV, Parquet or JSON (by extension)")
    _view_args(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.csv, OUT.parquet or OUT.json")
    p.add_argument("--raw-csv", action="store_true", help="write text cells of a CSV exactly as they are; by "
                   "default a cell starting with = + - @ (a formula to a spreadsheet) gets a leading '")

    p = sub.add_parser("gpus", help="list the GPU database with sources")
    p.add_argument("--json", action="store_true", help="one JSON list: every GPU with its key, peaks, clocks, "
                   "memory and source")

    p = sub.add_parser("profile", help="run COMMAND under ncu, locally or on --host, and show its kernels",
                       usage="flopscope profile [options] -- COMMAND [ARGS...]")
    add_profile_args(p)

    p = sub.add_parser("demo", help="open the bundled example in the app: a bf16 transformer training step "
                       "profiled on an H100 (--no-tui prints its table)")
    p.add_argument("--no-tui", action="store_true", help="print the kernel table instead of opening the app")
    p.add_argument("--json", action="store_true", help="with --no-tui: one JSON object, meta and rows")

    p = sub.add_parser("open", help="open a report file or a stored run in the terminal app (piped: its table)")
    p.add_argument("path", help="a report file, or the name or id of a stored run or sweep")
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings, for a file, a stored run or every "
                   "point of a sweep")
    p.add_argument("--no-tui", action="store_true", help="print the kernel table instead of opening the app")
    p.add_argument("--json", action="store_true", help="print one JSON object, meta and rows, instead of the app")
    _no_cache_arg(p)
    COMMANDS.update(add_runs_commands(sub))
    COMMANDS.update(add_sweep_command(sub))
    from .model import add_model_commands
    COMMANDS.update(add_model_commands(sub))
    from .check import add_check_command
    COMMANDS.update(add_check_command(sub))
    from .doctor import add_doctor_command
    COMMANDS.update(add_doctor_command(sub))
    from .ceilings import add_ceilings_command
    COMMANDS.update(add_ceilings_command(sub))
    from .serve import add_serve_command
    COMMANDS.update(add_serve_command(sub))
    return parser


def _view(args):
    report = read_report(args.path, gpu=args.gpu)
    sort = args.sort and sort_column(args.sort, args.by, isinstance(report.judged_by, dict), report.kernels.columns)
    rows = report.view(args.by, sort=sort, descending=not args.asc)
    if sort and rows[sort].isna().all():
        needs = NEEDS.get(sort, (sort,))  # the raw columns whose ncu metrics would fill it
        fix = missing_fix(report.missing, needs)
        raise FlopscopeError(args.path, f"no values for --sort {args.sort} in this report",
                             f"collect them with `{fix}`" if fix else "sort by another column")
    top = getattr(args, "top", None)
    if top:
        _say_cut_unknowns(rows, sort or "duration_s", top, args.sort or "time")
    args.sort = sort  # the column, for the table to show it
    return report, rows.head(top) if top else rows


def _say_cut_unknowns(rows, sort: str, top: int, title: str) -> None:
    """Rows whose sort value is unknown sort last either way; --top cutting them says so, so `--sort flop --top
    1` does not silently pass over a kernel whose FLOPs are unknown (it may have done the most)."""
    cut = int(rows[sort].iloc[top:].isna().sum())
    if cut:
        say(f"flopscope: --top {top} left out {cut} row(s) whose {title} is unknown (unknown values sort last "
              "either way); leave out --top to see them")


# Rows a printed table shows unless --top or --all says otherwise: a terminal never needs 100k formatted rows
# (formatting them took 100 s and 1.3 GB for a 100k-launch `--by launch`); --json always has every row.
TABLE_ROWS = 1000


def cmd_report(args) -> int:
    report, rows = _view(args)
    if not (args.json or args.top or args.all) and len(rows) > TABLE_ROWS:
        say(f"flopscope: showing the first {TABLE_ROWS} of {len(rows):,} rows; --top N for another number, --all "
            "for every row (--json and export always have them all)")
        rows = rows.head(TABLE_ROWS)
    return _print(report, rows, args.json, args.by, args.sort)


def _print(report, rows, as_json: bool, by: str = "name", sort: str | None = None) -> int:
    for line in warning_lines(report):
        say(line)
    if as_json:
        from ...core.json_rows import write_json_doc

        write_json_doc(run_meta(report), rows, sys.stdout)  # column by column: 100k rows in a second, not 18
    else:
        print_report(report, rows, console(), by, sort)
    return 0


def cmd_export(args) -> int:
    report, rows = _view(args)
    out = write_table(rows, args.output, meta=run_meta(report), raw_csv=args.raw_csv)
    for line in warning_lines(report):  # a CSV has no meta to carry them; after the write: a refusal is one line
        say(line)
    say(f"wrote {len(rows)} rows to {out}")
    return 0


def cmd_gpus(args) -> int:
    gpus = all_gpus()
    if args.json:
        json.dump(records(_gpu_frame(gpus)), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from ..presentation import format as fmt

    rows = [[g.name, g.key, g.compute_capability, str(g.sms or ""),
             *(fmt.si(g.peak(c), "FLOP/s") for c in ("fp64", "fp32", "tensor_tf32", "tensor_fp16", "tensor_bf16",
                                                      "tensor_fp8")),
             fmt.si(g.dram_bytes_per_s, "B/s"), g.source] for g in gpus]
    out = console()
    # A narrow terminal loses whole columns, least used first, never digits of a number.
    table, hidden = fitted_table(_GPU_COLUMNS, rows, out.width, flex=len(_GPU_COLUMNS) - 1, flex_min=30)
    out.print(table)
    print_hidden(out, hidden)
    out.print(Text("Tensor peaks are dense with FP32 accumulate (FP16-accumulate rates: --json); per device as "
                   "CUDA sees it (a K80 board is 2 devices)."))
    return 0


# Priorities: what drops first on a narrow terminal (higher first); Name, Key (what --gpu takes and error
# messages suggest) and FP32 always stay.
_GPU_COLUMNS = [Spec(title, numeric=title not in ("Name", "Key", "Source"), priority=p) for title, p in (
    ("Name", 0), ("Key", 0), ("CC", 7), ("SMs", 8), ("FP64", 5), ("FP32", 0), ("TF32 TC", 4), ("FP16 TC", 1),
    ("BF16 TC", 2), ("FP8 TC", 6), ("DRAM", 3), ("Source", 9))]


def _gpu_frame(gpus):
    import pandas as pd

    return pd.DataFrame([{
        "key": g.key, "names": list(g.names), "arch": g.arch, "compute_capability": g.compute_capability,
        "sms": g.sms, "boost_clock_hz": g.boost_clock_hz, "tensor_clock_hz": g.tensor_clock_hz,
        **{f"peak_{k}_flop_per_s": v for k, v in g.peaks.items()},
        "dram_bytes_per_s": g.dram_bytes_per_s, "l2_bytes": g.l2_bytes, "memory_bytes": g.memory_bytes,
        "notes": g.notes, "source": g.source,
    } for g in gpus])


def cmd_open(args) -> int:
    """The app in a terminal; with stdin or stdout not a terminal (a script, `> out.txt`), what `report` prints,
    as `runs` and `diff` decide: the app there would write escape codes into a file and wait for keys forever."""
    app = interactive(args)
    if args.path == "-" or _exists(args.path):
        if not app:
            report = read_report(args.path, gpu=args.gpu)
            return _print(report, report.group("name"), args.json)
        from ..app.app import run_app

        return run_app(args.path, gpu=args.gpu)
    _refuse_missing_file(args.path)
    with Store() as store:
        sweep = load_sweep(args.path, store, print_warning)  # a stored sweep by name
        # else a stored run by name or id (one-line error if there is none)
        report = store.load(args.path) if sweep is None else None
    if sweep is not None:
        sweep = _judged_lines(sweep, args.gpu) if args.gpu else sweep
        if not app:
            # 0.05: the app's tolerance
            _show(args.path, sweep, argparse.Namespace(json=args.json, tolerance=0.05, gpu=args.gpu))
            return 0
        from ..app.sweep_app import run_sweep_app  # Textual only for the app

        return run_sweep_app(sweep, title=args.path, judged=judged_against(sweep, args.gpu))

    report = with_gpu(report, args.gpu) if args.gpu else report
    if not app:
        return _print(report, report.group("name"), args.json)
    from ..app.app import run_app

    return run_app(args.path, gpu=args.gpu, report=report)


def _exists(path: str) -> bool:
    """Whether `path` names a file or folder, one behind a folder we may not enter included: reading it then
    says "permission denied", where os.path.exists would send it to the store as a run name."""
    try:
        os.stat(path)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return True


def _refuse_missing_file(ref: str) -> None:
    """A ref that looks like a path (a slash, a report or CSV suffix), exists nowhere and names no stored run or
    sweep was meant as a file: say "no such file", not "no such run in the store"."""
    if "/" not in ref and not ref.endswith((".ncu-rep", ".csv")):
        return
    with Store() as store:
        try:
            if not store.runs(ref).empty:  # a sweep of that name
                return
            store.resolve(ref)
        except FlopscopeError:
            raise FlopscopeError(ref, "no such file (nor a stored run or sweep of that name)",
                                 "check the path (`flopscope runs` lists the stored runs)") from None


def _judged_lines(lines: list, gpu: str) -> list:
    """A stored sweep's points judged against --gpu's ceilings (a point on several lines is judged once)."""
    from dataclasses import replace

    judged: dict[int, Report] = {}
    for line in lines:
        for _, report in line.points:
            if id(report) not in judged:
                judged[id(report)] = with_gpu(report, gpu)
    return [replace(line, points=[(value, judged[id(report)]) for value, report in line.points]) for line in lines]


def _bundled() -> list:
    """The example reports shipped in the package (tui/examples/), captured by the project on a real GPU."""
    from importlib.resources import files

    return sorted(p for p in files("flopscope.tui").joinpath("examples").iterdir()
                  if p.name.endswith((".ncu-rep", ".ncu-rep.xz")))


def bundled_example() -> str:
    """The example report shipped in the package, or the one-line error that there is none yet."""
    found = _bundled()
    if not found:
        raise FlopscopeError("demo", "this build has no bundled example (tui/examples/ was left out of the "
                             "package)", "reinstall flopscope, or open a report: flopscope report FILE.ncu-rep")
    return str(found[0])


def cmd_demo(args) -> int:
    path = bundled_example()
    if not interactive(args):
        return cmd_report(build_parser().parse_args(["report", path, *(["--json"] if args.json else [])]))
    from ..app.app import run_app

    return run_app(path)


COMMANDS = {"report": cmd_report, "export": cmd_export, "gpus": cmd_gpus, "open": cmd_open,
            "profile": cmd_profile, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()  # registers every command in COMMANDS
    if argv and argv[0] == "-":
        argv = ["open", *argv]  # `ncu --csv ... | flopscope -`: the table, as for a file
    elif argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        if _exists(argv[0]):
            argv = ["open", *argv]  # `flopscope PATH` opens the app
        elif "." in argv[0] or "/" in argv[0]:  # meant as a file: "invalid choice" would name the commands
            say(f"flopscope: {argv[0]}: no such file; check the path (`flopscope --help` lists the commands)")
            return 2
    argv, command = split_command(argv)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # from the command's own parser, so the message points to its --help, not flopscope's
        _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    args.child_command = command
    if getattr(args, "no_cache", False):
        os.environ[NO_CACHE_ENV] = "1"  # read_metrics checks it; also passed on to anything flopscope starts
    restore = _stop_on_signals()
    try:
        return COMMANDS[args.command](args)
    except FlopscopeError as err:
        say(f"flopscope: {err.line()}")
        return 2
    except BrokenPipeError:
        return 0
    except MemoryError:  # outside a reader (they name their file themselves): still one line, exit 2
        from ...core.readers.limits import out_of_memory

        say(f"flopscope: {out_of_memory(getattr(args, 'path', None) or args.command).line()}")
        return 2
    except KeyboardInterrupt:
        stop_all()
        # Only where a running ncu was stopped: `report FIFO` stopped while reading has none to speak of.
        stopped = " (ncu and the program it profiled were stopped too)" if stopped_running_job() else ""
        say(f"flopscope: stopped{stopped}")
        return 130
    finally:
        restore()


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _stop_on_signals():
    """SIGTERM and SIGHUP (the SSH session went away) end flopscope like Ctrl-C does: every ncu it started,
    and the program under it, here or on a remote host, is stopped first. Returns what undoes this."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum, frame):
        stop_all()
        raise KeyboardInterrupt

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    return lambda: [signal.signal(sig, handler) for sig, handler in before.items()]

