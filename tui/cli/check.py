"""`flopscope check RUN --baseline RUN_OR_FILE`: the regression gate a CI job runs (exit 1 on a
regression)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from rich.text import Text

from ...core import FlopscopeError, Report, read_report
from ...core.analysis import EVERY_METRIC, GATED, Check, check_runs, other_gpus, other_metrics
from ...core.common import display_text, is_missing
from ...core.export import records
from ...core.store import Store
from ..presentation import format as fmt
from ..presentation.text_report import Spec, console, fitted_table, print_hidden, say


def _load(ref: str, gpu: str | None) -> tuple[Report, str]:
    """A report file, or else a stored run, and how to name it."""
    if os.path.exists(ref):
        return read_report(ref, gpu=gpu), ref
    with Store() as store:
        report = store.load(ref)
        run_id, name = store.identify(ref)
    if gpu:
        from ...core.report import with_gpu

        report = with_gpu(report, gpu)
    return report, f"{name} (id {run_id})"


def cmd_check(args: argparse.Namespace) -> int:
    run, run_name = _load(args.run, args.gpu)
    base, base_name = _load(args.baseline, args.gpu)
    if args.where:  # both runs alike: a group is judged on the launches the expression keeps
        run, base = _launches_where(run, args.where), _launches_where(base, args.where)
    judged_on = EVERY_METRIC
    if gpus := other_gpus(run, base):
        if not args.allow_other_gpu:
            raise FlopscopeError(
                args.run,
                f"it ran on other GPUs than the baseline ({gpus}): its times would compare the"
                " hardware",
                "compare runs of one GPU, or pass --allow-other-gpu to judge each group on % of"
                " roof alone",
            )
        judged_on = ("pct_of_roof",)
        say(
            f"flopscope check: other GPUs ({display_text(gpus)}): judged on % of roof alone, each"
            " on its own GPU"
        )
    if metrics := other_metrics(run, base):
        say(f"flopscope check: the two reports collected different metrics ({metrics})")
    try:
        result = check_runs(
            run,
            base,
            by=args.by,
            max_drop=args.max_drop,
            min_share=args.min_share,
            judged_on=judged_on,
        )
    except ValueError as exc:
        raise FlopscopeError(args.run, str(exc), "see `flopscope check --help`") from None
    if args.json:
        json.dump(_json(result, run_name, base_name), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        _print(result, run_name, base_name)
    return 0 if result.passed else 1


def _launches_where(report: Report, where: str) -> Report:
    """The launches of `report` where `where` holds, each on its own values (as `report --by launch`
    shows it)."""
    from ..presentation.columns import table_columns
    from ..presentation.where import where_mask

    launches = report.group("launch", time_order=False)
    return report.only(
        where_mask(where, launches, table_columns("launch", isinstance(report.judged_by, dict)))
    )


def _json(result: Check, run_name: str, base_name: str) -> dict:
    return {
        "passed": result.passed,
        "judged": result.judged,
        "run": run_name,
        "baseline": base_name,
        "by": result.by,
        "max_drop": result.max_drop,
        "judged_on": list(result.judged_on),
        "min_share": result.min_share,
        "regressed": len(result.regressed),
        "rows": records(result.rows),
    }


_COLUMNS = [
    Spec("Verdict", numeric=False),
    Spec("Kernel", numeric=False),
    Spec("Share", priority=3),
    Spec("Time/launch", priority=2),
    Spec("ΔTime", priority=2, pair="t"),
    Spec("FLOP/s", priority=4),
    Spec("ΔFLOP/s", priority=3, pair="f"),
    Spec("%Roof", priority=4),
    Spec("Δ%Roof", priority=3, pair="r"),
]


_MATCHED = {"name": "by name", "nvtx": "by NVTX range", "module": "by module path"}


def _change(value) -> str:
    return "" if is_missing(value) else f"{100 * float(value):+.1f}%"


def _print(result: Check, run_name: str, base_name: str) -> None:
    out = console()
    rows = result.rows
    cells = [
        [
            r.verdict.upper() if r.verdict == "regressed" else r.verdict,
            r.kernel,
            fmt.share(r.share),
            fmt.seconds(r.time_per_launch_s_run),
            _change(r.time_per_launch_s_change),
            fmt.si(r.flop_per_s_run, "FLOP/s"),
            _change(r.flop_per_s_change),
            fmt.pct(r.pct_of_roof_run),
            _change(r.pct_of_roof_change),
        ]
        for r in rows.itertuples()
    ]
    out.print(Text(f"{run_name} against baseline {base_name}, by {result.by}", style="bold"))
    columns = (
        [_COLUMNS[0], Spec("Module", numeric=False), *_COLUMNS[2:]]
        if result.by == "module"
        else _COLUMNS
    )
    table, hidden = fitted_table(columns, cells, out.width, flex=1)
    out.print(table)
    print_hidden(out, hidden)
    counts = rows["verdict"].value_counts()
    words = ", ".join(
        f"{counts[v]} {v}"
        for v in ("regressed", "ok", "too small", "new", "vanished")
        if v in counts
    )
    gated = ", ".join(label for column, label, _ in GATED if column in result.judged_on)
    out.print(
        Text(
            f"{words} · a matched group regresses when {gated} moves the wrong way by more than"
            f" {fmt.share(result.max_drop)} (groups under {fmt.share(result.min_share)} of the"
            " baseline's time are not judged)",
            style="dim",
        )
    )
    if result.judged == 0:
        say(
            f"flopscope check: FAILED: no kernel group of {display_text(run_name)} was judged"
            f" against the baseline (none matched {_MATCHED[result.by]}, or each took under"
            f" {fmt.share(result.min_share)} of its time); try --by"
            f" {'nvtx' if result.by == 'name' else 'name'}"
        )
        return
    verdict = "FAILED" if not result.passed else "passed"
    say(
        f"flopscope check: {verdict}: {len(result.regressed)} of {result.judged} judged group(s)"
        " regressed"
    )
