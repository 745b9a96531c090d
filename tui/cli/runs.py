"""`flopscope runs` and `flopscope diff`: the run store from the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.text import Text

from ...core import FlopscopeError, read_report
from ...core.analysis import ceilings_apart, diff_runs, gpus_apart
from ...core.common import display_text
from ...core.export import records
from ...core.store import (
    AlreadyStored,
    Store,
    check_run_name,
    default_path,
    newest_first,
    recover_store,
)
from ...core.table.columns import NOT_WRITTEN
from ...core.table.module_tree import with_public_paths
from ..presentation import format as fmt
from ..presentation.diff_text import diff_meta, table_rows, time_change, totals_line
from ..presentation.text_report import Spec, console, fitted_table, print_hidden, say


def cmd_runs(args: argparse.Namespace) -> int:
    # opened here too for the app: a store that cannot be opened is a one-line error
    with Store() as store:
        if args.sweep is not None:
            _check_sweep(store, args.sweep)
        if not interactive(args):
            return _list_runs(store, args)
    from ..app.launch import run_runs

    return run_runs(store.path, args.sweep)


def _list_runs(store: Store, args: argparse.Namespace) -> int:
    runs = newest_first(store.runs(args.sweep))  # the Runs screen's order
    for name, what in store.problems.items():
        say(f"flopscope: warning: run {name}: {what}")
    if args.json:
        json.dump(records(runs), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    out = console()
    cells = [
        [
            str(r.id),
            f"{r.name} (damaged)" if r.damaged else r.name,
            fmt.when(r.created),
            r.sweep or "",
            fmt.params(r.params),
            r.host or "",
            r.gpu or "",
            fmt.integer(r.launches),
            fmt.at_least(fmt.seconds(r.total_time_s), "total_time_s" in r.lower_bounds),
            fmt.at_least(fmt.si(r.total_flop), "total_flop" in r.lower_bounds),
        ]
        for r in runs.itertuples()
    ]
    table, hidden = fitted_table(_RUNS_COLUMNS, cells, out.width, flex=1)
    out.print(table)
    print_hidden(out, hidden)
    say(f"{len(runs)} run(s) in {store.path}, newest first")  # the order the Runs screen names too
    return 0


def _check_sweep(store: Store, sweep: str) -> None:
    """`--sweep NAME` with no run of that sweep is a typo, not an empty sweep: name the sweeps there
    are."""
    if not store.runs(sweep).empty:
        return
    names = sorted({str(s) for s in store.runs()["sweep"] if s})
    raise FlopscopeError(
        f"--sweep {sweep}",
        "no runs of this sweep in the store",
        (
            f"sweeps stored: {', '.join(names)}"
            if names
            else "no sweep is stored yet (`flopscope sweep`)"
        ),
    )


REPORT_SUFFIXES = ("", ".xz", ".gz", ".bz2")  # report.ncu-rep, and as xz, gzip or bzip2 compress it


def cmd_import(args: argparse.Namespace) -> int:
    """A run folder into the store, as `flopscope profile` would have stored it (host and command
    from its run.json): for a profile whose store failed after ncu had finished. A report file on
    its own (an .ncu-rep, a compressed one, an ncu CSV) is stored as a new run too, named after the
    file."""
    target = Path(args.folder)
    path, meta = (target, {}) if target.is_file() else (_folder_report(target), _run_json(target))
    default = _report_name(target) if target.is_file() else target.resolve().name
    # `--name ''` is refused, not the default
    name = args.name if args.name is not None else default
    given = f"--name {args.name}" if args.name is not None else f"{target} (its name)"
    check_run_name(name, given)
    command = meta.get("command") if isinstance(meta.get("command"), list) else None
    host = meta.get("host") if isinstance(meta.get("host"), str) else None
    report = read_report(path, gpu=args.gpu, params={"command": command, "host": host})
    with Store() as store:
        store.check_names_apart(name, None, given, "")
        created = _captured(report.meta.captured, meta)
        # A second copy would show up in every list, diff and sweep: the check is in the insert's
        # transaction, so two imports of one folder at once store it once.
        once = path if args.name is None else None
        try:
            name = store.save_unique(
                report, name, host=host, command=command, created=created, once_from=once
            )
        except AlreadyStored as stored:
            raise FlopscopeError(
                target,
                f"already stored as run {stored.name}",
                f"open it with `flopscope open {stored.name}`, or pass --name to store another"
                " copy",
            ) from None
    say(f"flopscope: stored {target} as run {name} ({store.path})")
    return 0


def _folder_report(folder: Path) -> Path:
    """The report in a run folder: report.ncu-rep, or compressed as it is kept or sent on (`xz
    report.ncu-rep`), read as it is, as `open` reads it."""
    # "no report.ncu-rep in this folder" would send one looking inside a folder not there
    if not folder.is_dir():
        raise FlopscopeError(
            folder,
            "no such file or folder",
            "pass a report file, or the run folder `flopscope profile` printed as it started (it"
            " holds report.ncu-rep)",
        )
    found = [
        folder / f"report.ncu-rep{ext}"
        for ext in REPORT_SUFFIXES
        if (folder / f"report.ncu-rep{ext}").is_file()
    ]
    if not found:
        raise FlopscopeError(
            folder,
            "no report.ncu-rep in this folder",
            "pass a run folder made by `flopscope profile` (it prints the folder as it starts), or"
            " a report file",
        )
    return found[0]


def _run_json(folder: Path) -> dict:
    """What `flopscope profile` wrote beside the report (host, command, start); {} where there is
    none."""
    try:
        meta = json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _report_name(file: Path) -> str:
    """`train_bs8.ncu-rep.xz` -> `train_bs8`: a report file's name without its report and
    compression suffixes."""
    name = file.name
    for suffix in (*REPORT_SUFFIXES[1:], ".ncu-rep", ".csv"):
        name = name.removesuffix(suffix)
    return name


LAST_DATE = 253402300800  # 10000-01-01 UTC, in Unix seconds


def _captured(report_captured: object, run_meta: dict) -> float | None:
    """When the run was captured: ncu's own session start in the report, else when `flopscope
    profile` started (run.json), else unknown (the store then says now). Never the moment of the
    import."""
    for when in (report_captured, run_meta.get("started")):
        # Both are read from files: a time a date cannot show (past year 9999, negative, NaN) is no
        # time.
        if isinstance(when, (int, float)) and not isinstance(when, bool) and 0 < when < LAST_DATE:
            return float(when)
    return None


def cmd_recover(args: argparse.Namespace) -> int:
    """For the store file a damaged page made unreadable: exit 0 if every run was copied, 1 if some
    were lost."""
    path = default_path()
    if not path.is_file():
        raise FlopscopeError(
            path, "no run store here", "nothing to recover (FLOPSCOPE_HOME picks the folder)"
        )
    result = recover_store(path)
    for lost in result.lost:
        say(f"flopscope: warning: run {lost}: on a damaged page of the store, not recovered")
    print(
        f"flopscope: recovered {len(result.kept)} of {len(result.kept) + len(result.lost)} run(s)"
        f" into a new {path}; the damaged file is kept as {result.damaged}",
        file=sys.stderr,
    )
    return 1 if result.lost else 0


def cmd_diff(args: argparse.Namespace) -> int:
    with Store() as store:
        a, b = store.load(args.run_a), store.load(args.run_b)
        (id_a, name_a), (id_b, name_b) = store.identify(args.run_a), store.identify(args.run_b)
    rows = diff_runs(a, b, by=args.by)
    gpu_a, gpu_b = a.gpu_label, b.gpu_label
    if interactive(args):
        from ..app.launch import run_screen
        from ..app.screens.diff import DiffScreen

        return run_screen(DiffScreen(rows, name_a, name_b, (gpu_a, gpu_b), (a, b), (id_a, id_b)))
    for apart in (gpus_apart(a.gpu_names, b.gpu_names), ceilings_apart(a, b)):
        if apart:  # the Diff screen's warnings, word for word
            say(f"flopscope: warning: {apart}")
    if args.json:  # the runs by name and id, whichever was typed: `diff 6 5` names them too
        json.dump(
            {
                **diff_meta(rows, (name_a, name_b), (id_a, id_b), (gpu_a, gpu_b)),
                "rows": records(_written(rows, args.by)),
            },
            sys.stdout,
            indent=1,
        )
        sys.stdout.write("\n")
        return 0
    out = console()
    out.print(
        Text(
            display_text(
                f"A: {name_a} (id {id_a}, {gpu_a or 'unknown GPU'}) · B: {name_b} (id {id_b},"
                f" {gpu_b or 'unknown GPU'})"
            ),
            style="bold",
        )
    )
    by_gpu = bool(rows.attrs.get("by_gpu"))
    name = [Spec("Module", numeric=False)] if args.by == "module" else _DIFF_COLUMNS[:1]
    columns = [*name, *([_GPU_COLUMN] if by_gpu else []), *_DIFF_COLUMNS[1:]]
    # B/A as the app's Diff screen shows it: blank where one run never ran the group
    shown = table_rows(rows)
    table, hidden = fitted_table(
        columns, [_diff_cells(r, by_gpu) for r in shown.itertuples()], out.width
    )
    out.print(table)
    out.print(Text(totals_line(rows)))
    order = "depth first, each node's children" if args.by == "module" else ""
    out.print(
        Text(
            f"{order} largest time change first · ΔTime = B - A, B/A = Time B / Time A".strip(),
            style="dim",
        )
    )
    print_hidden(out, hidden)
    return 0


def _written(rows, by: str):
    """A diff's rows as `--json` writes them: a module's path as its names, an NVTX group's stack
    as `nvtx_ranges` alone (`nvtx_stack`'s separators are control characters)."""
    rows = with_public_paths(rows) if by == "module" else rows
    return rows.drop(columns=[c for c in NOT_WRITTEN if c in rows])


# The name is cut to fit, never a number: pairs of columns drop together, least telling first.
# Numbers are never cut: lower-value columns drop whole at 80 columns (the ID last of them: it names
# a run).
_RUNS_COLUMNS = [
    Spec("ID", priority=1),
    Spec("Name", numeric=False),
    Spec("Created", numeric=False, priority=3),
    Spec("Sweep", numeric=False, priority=4),
    Spec("Params", numeric=False, priority=2),
    Spec("Host", numeric=False, priority=5),
    Spec("GPU", numeric=False, priority=4),
    Spec("Launches", priority=3),
    Spec("Time"),
    Spec("FLOP"),
]
_DIFF_COLUMNS = [
    Spec("Kernel", numeric=False),
    Spec("N A", priority=3, pair="N"),
    Spec("N B", priority=3, pair="N"),
    Spec("Time A"),
    Spec("Time B"),
    Spec("ΔTime"),
    Spec("B/A"),
    Spec("FLOP A", priority=2, pair="FLOP"),
    Spec("FLOP B", priority=2, pair="FLOP"),
    Spec("DRAM A", priority=4, pair="DRAM"),
    Spec("DRAM B", priority=4, pair="DRAM"),
    Spec("", numeric=False),
]
# Groups matched on name and GPU (a run with launches on several GPUs): the GPU tells apart two rows
# of a name.
_GPU_COLUMN = Spec("GPU", numeric=False)


def _diff_cells(r, by_gpu: bool = False) -> list[str]:
    gpu = [str(r.gpu or "unknown GPU")] if by_gpu else []
    return [
        str(r.kernel),
        *gpu,
        fmt.integer(r.count_a),
        fmt.integer(r.count_b),
        fmt.seconds(r.duration_s_a),
        fmt.seconds(r.duration_s_b),
        time_change(r.duration_s_delta),
        fmt.ratio(r.time_ratio),
        fmt.si(r.flop_a),
        fmt.si(r.flop_b),
        fmt.si(r.dram_bytes_a, "B"),
        fmt.si(r.dram_bytes_b, "B"),
        "" if r.presence == "both" else r.presence,
    ]


def interactive(args: argparse.Namespace) -> bool:
    """The app, unless a table or JSON was asked for or there is no terminal (a script, a pipe)."""
    if args.json or args.no_tui:
        return False
    # `flopscope serve`: textual-serve runs the app over pipes, its web driver standing in for the
    # terminal
    return os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER or (
        sys.stdin.isatty() and sys.stdout.isatty()
    )


WEB_DRIVER = "textual.drivers.web_driver:WebDriver"  # what textual-serve sets TEXTUAL_DRIVER to
