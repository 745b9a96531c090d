"""The commands that read one report and show it: `report`, `open` and `demo` (`export` writes it:
export.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...core import FlopscopeError, read_report
from ...core.common import display_text
from ...core.export import json_ready, run_meta
from ...core.report import Report, in_order, with_gpu
from ...core.store import judged_by
from ...core.table import NEEDS, missing_fix
from ..presentation.columns import sort_column, table_columns
from ..presentation.messages import print_warning, say
from ..presentation.warnings import warning_lines
from .args import TABLE_ROWS, build_parser
from .main import _exists, bundled_example
from .progress import read_progress

# The printed table (rich), ncu's rule results, stored sweeps and the app are imported where they
# are used: `export` and `--json` need none of them, and their imports would be a noticeable share
# of a plain read.


def _view(args):
    report, rows, order = _view_order(args)
    return report, in_order(rows, order)


def _view_order(args):
    """The report, and the rows the command shows in the order it shows them (Report.view_order)."""
    report = _read(args)
    sort = args.sort and sort_column(
        args.sort, args.by, isinstance(report.judged_by, dict), report.kernels.columns
    )
    rows, order = report.view_order(args.by, sort=sort, descending=not args.asc)
    if args.where:  # the rows the expression keeps, in the view's order
        from ..presentation.where import where_mask

        keep = where_mask(
            args.where, rows, table_columns(args.by, isinstance(report.judged_by, dict))
        )
        order = order[keep[order]]
    if sort and rows[sort].isna().all():
        needs = NEEDS.get(sort, (sort,))  # the raw columns whose ncu metrics would fill it
        fix = missing_fix(report.missing, needs)
        raise FlopscopeError(
            args.path,
            f"no values for --sort {args.sort} in this report",
            f"collect them with `{fix}`" if fix else "sort by another column",
        )
    top = getattr(args, "top", None)
    if top:
        _say_cut_unknowns(rows[sort or "duration_s"].take(order), top, args.sort or "time")
    args.sort = sort  # the column, for the table to show it
    return report, rows, order[:top] if top else order


def _read(args) -> Report:
    """The report `args.path` names, read with progress on stderr (not for --json) and judged by
    `--roof`: a file, else a stored run by name or id, as `open`, `diff` and `check` take it."""
    if args.path != "-" and not _exists(args.path):
        return _judged(_stored_run(args.path, args.gpu), args)
    _arrow_on_malloc()
    with read_progress(not getattr(args, "json", False)) as progress:
        report = read_report(args.path, gpu=args.gpu, progress=progress)
    return _judged(report, args)


def _arrow_on_malloc() -> None:
    """The command's Arrow buffers (a report's text columns, its cache entries' conversions) on the
    C library's malloc from here on, not on Arrow's mimalloc: mimalloc asks the kernel for
    transparent huge pages, each zeroed whole at its first touch (and compacted for, on a machine
    whose memory is fragmented); a 100k-launch report's first open spent ~0.6 CPU-s and ~100 MB of
    peak memory more on them. For the whole process: a command reads one report, and each buffer
    is freed by the pool that made it (core's table_cache switches the same way for an entry's read,
    and back)."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def _stored_run(ref: str, gpu: str | None) -> Report:
    """The stored run `ref` names (one line if none; a path-like ref that names nothing: "no such
    file")."""
    _refuse_missing_file(ref)
    from ...core.store import Store

    with Store() as store:
        report = store.load(ref)
    return with_gpu(report, gpu) if gpu else report


def _judged(report: Report, args) -> Report:
    """The report against the roof `--roof` names (one line, exit 2, where `measured` has no stored
    ceilings)."""
    return judged_by(report, getattr(args, "roof", "clock"))


def _say_cut_unknowns(sorted_by, top: int, title: str) -> None:
    """Rows whose sort value is unknown sort last either way; --top cutting them says so, so `--sort
    flop --top 1` does not silently pass over a kernel whose FLOPs are unknown (it may have done the
    most). `sorted_by`: the sort column's values, in the rows' order."""
    cut = int(sorted_by.iloc[top:].isna().sum())
    if cut:
        say(
            f"flopscope: --top {top} left out {cut} row(s) whose {title} is unknown (unknown values"
            " sort last either way); leave out --top to see them"
        )


def cmd_report(args) -> int:
    if args.by == "module":
        return _report_modules(args)
    if getattr(args, "model", None):
        raise FlopscopeError(
            f"--model {args.model}",
            "is for the module tree",
            "add --by module (or use `flopscope reconcile`)",
        )
    if args.source:
        from .source import print_source

        return print_source(_read(args), args.source, args.top, args.json)
    report, rows = _view(args)
    columns = _chosen(args, report, rows)
    # what the document needs from the report, then the report let go (see export.cmd_export)
    if args.json:
        doc = _json_doc(report, rows, args.by)
        del report
        return _print_json(rows, *doc)
    if not (args.top or args.all) and len(rows) > TABLE_ROWS:
        say(
            f"flopscope: showing the first {TABLE_ROWS} of {len(rows):,} rows; --top N for another"
            " number, --all for every row (--json and export always have them all)"
        )
        rows = rows.head(TABLE_ROWS)
    return _print(report, rows, False, args.by, args.sort, columns, getattr(args, "output", None))


def _chosen(args, report, rows) -> list[str] | None:
    """`--columns` as column keys (None: the table's own); a name that is no column: one line, exit
    2."""
    if not args.columns:
        return None
    from ..presentation.columns import column_keys, filter_names

    return column_keys(
        args.columns, filter_names(table_columns(args.by, isinstance(report.judged_by, dict)), rows)
    )


def _module_tree(args):
    """The report and its module tree down to `--depth`; a report without NVTX ranges says what
    would fill it."""
    for option, value in (
        ("--where", getattr(args, "where", None)),
        ("--columns", getattr(args, "columns", None)),
    ):
        if value:
            raise FlopscopeError(
                f"{option} {value}",
                "is for the kernel table, not the module tree",
                "leave out --by module",
            )
    report = _read(args)
    tree = report.module_tree()
    if getattr(args, "model", None):
        from ...core.analysis.model_flops import load_model_json
        from ..presentation.module_figures import with_model

        tree = with_model(report, tree, load_model_json(args.model))
    if args.depth is not None:
        tree = tree[tree["depth"] <= args.depth].reset_index(drop=True)
    if report.kernels["nvtx"].isna().all():
        from ..presentation.module_tree import modules_hint

        say(f"flopscope: {display_text(str(args.path))} has {modules_hint(report.meta)}")
    return report, tree


def _report_modules(args) -> int:
    from rich.console import Group
    from rich.text import Text

    from ..presentation.blocks import lines
    from ..presentation.module_figures import with_steps
    from ..presentation.module_tree import tree_json, tree_table
    from ..presentation.tables import print_hidden
    from ..presentation.text_report import console, header_blocks

    report, tree = _module_tree(args)
    tree, steps = with_steps(report, tree)  # a timing file: each node's MFU beside its time
    if args.json:
        doc = {"meta": json_ready(run_meta(report)), "rows": tree_json(tree)}
        if steps is not None:
            from ..presentation.step_mfu import steps_json

            doc["steps"] = json_ready(steps_json(steps))
        json.dump(doc, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    out = console()
    for line in warning_lines(report):
        say(line)
    out.print(Group(*lines(header_blocks(report), out.width)), no_wrap=True)
    out.print()
    table, hidden = tree_table(tree, out.width)
    out.print(table)
    out.print(
        Text(
            f"{len(tree)} node(s) · Fwd/Bwd: forward and backward time · Own: outside its children",
            style="dim",
        )
    )
    print_hidden(out, hidden)
    if steps is not None:
        _print_steps(out, report, steps)
    return 0


def _print_steps(out, report, steps) -> None:
    from rich.text import Text

    from ..presentation.step_mfu import no_timing_hint, sources, steps_table
    from ..presentation.tables import print_hidden

    out.print()
    table, hidden = steps_table(steps, out.width)
    out.print(table)
    for line in sources(steps):
        out.print(Text(line, style="dim"))
    print_hidden(out, hidden)
    if not steps.timing_file:
        say(f"flopscope: {no_timing_hint(report.meta)}")


def _print(
    report,
    rows,
    as_json: bool,
    by: str = "name",
    sort: str | None = None,
    columns: list[str] | None = None,
    picture: str | None = None,
) -> int:
    if as_json:
        return _print_json(rows, *_json_doc(report, rows, by))
    from ..presentation.rules import rule_items, rules_table
    from ..presentation.text_report import console, print_report

    for line in warning_lines(report):
        say(line)
    rules = _rules(report, rows, by)
    out = console(record=picture is not None)
    print_report(report, rows, out, by, sort, columns)
    if rules:
        out.print()
        out.print(rules_table(rule_items(*rules)))
    if picture is not None:
        save_picture(out, picture, f"flopscope report {Path(report.meta.source).name}")
    return 0


def save_picture(out, target: str, title: str) -> None:
    """What `out` recorded, as OUT.svg or OUT.html (rich's own export) or OUT.txt; its path said on
    stderr."""
    path = Path(target)
    kind = path.suffix.lower()
    if kind not in (".svg", ".html", ".txt"):
        raise FlopscopeError(
            target, "is no picture file flopscope writes", "name it OUT.svg, OUT.html or OUT.txt"
        )
    try:
        if kind == ".svg":
            out.save_svg(str(path), title=title)
        elif kind == ".html":
            out.save_html(str(path))
        else:
            out.save_text(str(path))
    except OSError as exc:
        why = f"cannot be written ({exc.strerror})"
        raise FlopscopeError(target, why, "choose a folder you can write to") from None
    say(f"flopscope: wrote {path.resolve()}")


def _rules(report, rows, by: str):
    """One row (one kernel, or --top 1) is a kernel's view: ncu's rule results for it follow, read
    from the file."""
    if len(rows) != 1:
        return None
    from ..presentation.rules import row_rule_results

    return row_rule_results(report, rows.iloc[0], by)


def _json_doc(report, rows, by: str) -> tuple[list[str], dict, dict | None]:
    """What `--json` takes from the report: its warnings, its meta, a kernel's rule results
    (`ncu_rules`), and by launch each launch's opcodes (`opcodes`)."""
    rules = _rules(report, rows, by)
    extra = {"ncu_rules": {**rules[0].as_dict(), "launch": rules[1]}} if rules else None
    if by == "launch":  # each launch's warp instructions per SASS opcode, nested, not a column each
        from ..presentation.opcode_mix import launch_opcodes

        if opcodes := launch_opcodes(report, rows):
            extra = {**(extra or {}), "opcodes": opcodes}
    return warning_lines(report), run_meta(report), extra


def _print_json(rows, warnings: list[str], meta: dict, extra: dict | None) -> int:
    from ...core.export import write_json_doc

    for line in warnings:
        say(line)
    write_json_doc(meta, rows, sys.stdout, extra)  # column by column, not row by row: fast
    return 0


def cmd_open(args) -> int:
    """The app in a terminal; with stdin or stdout not a terminal (a script, `> out.txt`), what
    `report` prints, as `runs` and `diff` decide: the app there would write escape codes into a file
    and wait for keys forever."""
    from .runs import interactive

    app = interactive(args)
    flop_model = _flop_model(args.model)  # before the app: a bad file is its one line, exit 2
    if args.path == "-" or _exists(args.path):
        if not app:
            if flop_model is not None:
                return _modules_report(args, args.path)
            report = _read(args)
            return _print(report, report.group("name"), args.json)
        # The read starts now, beside Textual's import and the app's start-up (open_file.py).
        from ..app.open_file import open_file

        return open_file(args.path, gpu=args.gpu, roof=args.roof, flop_model=flop_model)
    _refuse_missing_file(args.path)
    from ...core.analysis import load_sweep
    from ...core.store import Store
    from .sweep import _show, judged_against

    with Store() as store:
        sweep = load_sweep(args.path, store, print_warning)  # a stored sweep by name
        # else a stored run by name or id (one-line error if there is none)
        stored = store.load(args.path) if sweep is None else None
    if sweep is not None:
        if flop_model is not None:
            raise FlopscopeError(
                f"--model {args.model}",
                "puts a model's FLOPs beside one report's modules, not a sweep's",
                "open one of its points by name",
            )
        if args.roof != "clock":
            raise FlopscopeError(
                f"--roof {args.roof}",
                "judges one report or run, not a sweep",
                "open one of its points by name",
            )
        sweep = _judged_lines(sweep, args.gpu) if args.gpu else sweep
        if not app:
            # 0.05: the app's tolerance
            _show(
                args.path, sweep, argparse.Namespace(json=args.json, tolerance=0.05, gpu=args.gpu)
            )
            return 0
        from ..app.launch import run_sweep  # Textual only for the app

        return run_sweep(sweep, title=args.path, judged=judged_against(sweep, args.gpu))

    assert stored is not None  # not a sweep: the run of that name (load raises where there is none)
    report = _judged(with_gpu(stored, args.gpu) if args.gpu else stored, args)
    if not app:
        if flop_model is not None:
            return _modules_report(args, args.path)
        return _print(report, report.group("name"), args.json)
    from ..app.launch import run_kernels

    return run_kernels(args.path, gpu=args.gpu, report=report, flop_model=flop_model)


def _flop_model(path: str | None):
    """`--model MODEL.json` read (None without it); a file that is not `flopscope model --json`'s
    raises its one line."""
    if not path:
        return None
    from ...core.analysis.model_flops import load_model_json

    return load_model_json(Path(path).expanduser())


def _modules_report(args, path: str) -> int:
    """`open` or `demo` with `--model`, piped: what `report --by module --model` prints."""
    argv = ["report", path, "--by", "module", "--model", args.model]
    argv += ["--roof", getattr(args, "roof", "clock")]
    argv += ["--gpu", args.gpu] if getattr(args, "gpu", None) else []
    argv += ["--json"] if args.json else []
    argv += ["--no-cache"] if getattr(args, "no_cache", False) else []
    return cmd_report(build_parser().parse_args(argv))


def _refuse_missing_file(ref: str) -> None:
    """A ref that looks like a path (a slash, a report or CSV suffix), exists nowhere and names no
    stored run or sweep was meant as a file: say "no such file", not "no such run in the store"."""
    if "/" not in ref and not ref.endswith((".ncu-rep", ".csv")):
        return
    from ...core.store import Store

    with Store() as store:
        try:
            if not store.runs(ref).empty:  # a sweep of that name
                return
            store.resolve(ref)
        except FlopscopeError:
            raise FlopscopeError(
                ref,
                "no such file (nor a stored run or sweep of that name)",
                "check the path (`flopscope runs` lists the stored runs)",
            ) from None


def _judged_lines(lines: list, gpu: str) -> list:
    """A stored sweep's points judged against --gpu's ceilings (a point on several lines is judged
    once)."""
    from dataclasses import replace

    judged: dict[int, Report] = {}
    for line in lines:
        for _, report in line.points:
            if id(report) not in judged:
                judged[id(report)] = with_gpu(report, gpu)
    return [
        replace(line, points=[(value, judged[id(report)]) for value, report in line.points])
        for line in lines
    ]


def cmd_demo(args) -> int:
    from .runs import interactive

    path = bundled_example()
    flop_model = _flop_model(args.model)
    if not interactive(args):
        if flop_model is not None:
            return _modules_report(args, str(path))
        return cmd_report(
            build_parser().parse_args(["report", path, *(["--json"] if args.json else [])])
        )
    from ..app.open_file import open_file

    return open_file(path, flop_model=flop_model)
