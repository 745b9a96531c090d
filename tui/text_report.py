"""The non-interactive kernel table (rich) and its JSON twin, for terminals and scripts."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import pandas as pd
from flopscope.core import FMA_CONVENTION, Report, all_gpus
from flopscope.core.export import records
from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from . import format as fmt
from .widgets.table_model import table_columns


def console() -> Console:
    """Rich console for the CLI tables; piped output keeps a wide table instead of rich's 80-column default."""
    return Console(highlight=False, width=shutil.get_terminal_size((160, 24)).columns)


def header_lines(report: Report) -> list[str]:
    """GPU, ceilings with their sources, and run-level figures: shared by the CLI and the app."""
    meta, s = report.meta, report.summary()
    found = f", named by {meta['gpu_source']}" if meta.get("gpu_source") else ""
    lines = [f"{_gpu_names(report)}{found} · {meta['source']} ({meta['format']}, {meta['launches']} launches)"]
    several = isinstance(report.judged_by, dict)
    if report.gpu is None and not several:
        same = [g.key for g in all_gpus() if g.compute_capability == str(meta.get("compute_capability"))]
        of_cc = f"; of CC {meta['compute_capability']}: {', '.join(same[:6])}" if same else ""
        lines.append(f"No datasheet ceilings for this GPU: pass --gpu NAME (see `flopscope gpus`{of_cc}).")
    for name, gpu in (report.judged_by.items() if several else ()):
        if gpu is None:
            lines.append(f"No datasheet ceilings for {name}: its launches have only the report's own peak counters.")
    ceilings = report.ceilings()
    for gpu in dict.fromkeys(c.gpu for c in ceilings):
        parts = [f"{c.name.upper()} {fmt.si(c.value, 'B/s' if c.name == 'dram' else 'FLOP/s')} ({c.source})"
                 for c in ceilings if c.gpu == gpu]
        lines.append(f"Ceilings{', ' + gpu if gpu else ''}: " + "; ".join(parts))
    lines.append(
        f"Kernel time {fmt.seconds(s.total_time_s) or 'n/a'} · FLOP {_flop(s)} · "
        f"FLOPS eff {fmt.pct(100 * s.flops_efficiency) or 'n/a'} · "
        f"compute eff {fmt.pct(100 * s.compute_efficiency) or 'n/a'} · "
        f"bandwidth eff {fmt.pct(100 * s.bandwidth_efficiency) or 'n/a'}"
        + (f" · utilization {fmt.pct(100 * s.utilization)}" if s.utilization == s.utilization else "")
    )
    if s.not_profiled:
        lines.append(f"{s.not_profiled} launch(es) without values (ncu failed to profile them); kept, marked.")
    return lines


def _gpu_names(report: Report) -> str:
    """'NVIDIA A100 (CC 8.0)'; every GPU with its launches where the file holds several."""
    meta = report.meta
    gpus = meta.get("gpus") or []
    if len(gpus) > 1:
        return " + ".join(f"{g['name']} (" + (f"CC {g['compute_capability']}, " if g.get("compute_capability") else "")
                          + f"{g['launches']} launch{'es' if g['launches'] != 1 else ''})" for g in gpus)
    cc = f" (CC {meta['compute_capability']})" if meta.get("compute_capability") else ""
    return f"{meta.get('gpu') or 'unknown GPU'}{cc}"


def _flop(s) -> str:
    """The run's FLOPs; where some launches' are unknown, the counted part as a lower bound and how much
    kernel time is unaccounted for (the missing counters are named on their own line)."""
    if s.total_flop == s.total_flop:
        return fmt.si(s.total_flop)
    if s.flop_counted == s.flop_counted and s.unknown_flop_time_share == s.unknown_flop_time_share:
        return f"≥ {fmt.si(s.flop_counted)} (unknown for {fmt.pct(100 * s.unknown_flop_time_share)} of kernel time)"
    return "n/a"


def missing_lines(report: Report) -> list[str]:
    return [f"{report.meta['source']}: {m.problem()}; collect it with `{m.fix()}`" for m in report.missing]


@dataclass(frozen=True)
class Spec:
    """One column of a printed table."""

    title: str
    numeric: bool = True  # right-aligned, and never cut: the column drops whole instead
    priority: int = 0  # higher drops first when the terminal is narrow; 0 never drops
    pair: str = ""  # columns with the same pair drop together (A and B of a comparison)


_GAP = 2  # rich's padding (0, 1) on both neighbours, without edge padding


def fitted_table(specs: list[Spec], rows: list[list[str]], width: int, flex: int | None = 0,
                 flex_min: int | None = None) -> tuple[Table, list[str]]:
    """A table of `rows` (cells already text) no wider than `width`, and the titles of the columns dropped.

    Every column gets the width of its longest cell, except `flex` (the name), which takes what is left and is
    ellipsized: rich would otherwise squeeze every column, numbers included, to fit a long C++ name.
    """
    natural = [max([cell_len(s.title), *(cell_len(r[i]) for r in rows)]) for i, s in enumerate(specs)]
    blank = [not any(r[i] for r in rows) for i in range(len(specs))]
    if flex is not None and flex_min is None:
        flex_min = min(natural[flex], max(16, width * 2 // 5))
    keep = _fit(specs, natural, blank, width, flex, flex_min or 0)
    spare = width - sum(natural[i] for i in keep if i != flex) - _GAP * (len(keep) - 1)
    table = Table(box=None, header_style="bold", pad_edge=False, expand=False)
    for i in keep:
        size = max(min(natural[i], spare), 1) if i == flex else natural[i]
        table.add_column(specs[i].title, justify="right" if specs[i].numeric else "left", no_wrap=True,
                         overflow="ellipsis", width=size)
    if flex in keep and spare < natural[flex]:
        rows = _distinct_names(rows, flex, max(spare, 1))
    for row in rows:
        # Text, not markup: kernel names like `f<T>[with T = float]` must print verbatim.
        table.add_row(*(Text(row[i]) for i in keep))
    hidden = [specs[i].pair or specs[i].title for i in range(len(specs)) if i not in keep and not blank[i]]
    return table, list(dict.fromkeys(hidden))


def _fit(specs: list[Spec], natural: list[int], blank: list[bool], width: int, flex: int | None,
         flex_min: int) -> list[int]:
    """Indexes of the columns kept: drop until the name has `flex_min` cells, blank columns first (they say
    nothing), then the highest priority, leftmost on ties as the app's `fit()` does."""
    keep = list(range(len(specs)))

    def needed() -> int:
        return sum(flex_min if i == flex else natural[i] for i in keep) + _GAP * (len(keep) - 1)

    while needed() > width:
        droppable = [i for i in keep if specs[i].priority > 0]
        if not droppable:
            break
        worst = specs[max(droppable, key=lambda i: (blank[i], specs[i].priority))]
        keep = [i for i in keep if specs[i] is not worst and not (worst.pair and specs[i].pair == worst.pair)]
    return keep


def _distinct_names(rows: list[list[str]], at: int, size: int) -> list[list[str]]:
    """Names that would read alike with their ends cut are cut in the middle instead: C++ names of one library
    share long prefixes (`cutlass::Kernel<cutlass::gemm::kernel::...`) and differ late."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        seen.setdefault(row[at][: size - 1], set()).add(row[at])
    alike = {name for names in seen.values() if len(names) > 1 for name in names}
    if not alike:
        return rows
    return [[_middle(c, size) if i == at and c in alike else c for i, c in enumerate(r)] for r in rows]


def _middle(text: str, size: int) -> str:
    if cell_len(text) <= size or size < 3:
        return text
    head = (size - 1) // 2
    return text[:head] + "…" + text[len(text) - (size - 1 - head):]


def rich_table(rows: pd.DataFrame, width: int, by: str = "name", gpus: bool = False) -> tuple[Table, list[str]]:
    """The kernel table as the app shows it for this grouping (its first column says what a row is; `gpus`:
    the next one says which GPU, for a file with launches on several)."""
    columns = table_columns(by, gpus)
    cells = [[col.render(values.get(col.name)) for col in columns]
             for values in (row._asdict() for row in rows.itertuples(index=False))]
    specs = [Spec(col.title, col.numeric, col.priority) for col in columns]
    return fitted_table(specs, cells, width)


def print_hidden(console: Console, hidden: list[str]) -> None:
    """Say which columns a narrow terminal hid, so a missing column is never mistaken for missing data."""
    if hidden:
        console.print(Text(f"Hidden at {console.width} columns: {', '.join(hidden)}; widen or use --json",
                           style="dim"))


def print_report(report: Report, rows: pd.DataFrame, console: Console, by: str = "name") -> None:
    head = [Text(line, style="bold" if i == 0 else "") for i, line in enumerate(header_lines(report))]
    console.print(Group(*head))
    console.print()
    table, hidden = rich_table(rows, console.width, by, isinstance(report.judged_by, dict))
    console.print(table)
    console.print(Text(f"{len(rows)} row(s) · {FMA_CONVENTION}", style="dim"))
    print_hidden(console, hidden)


def report_json(report: Report, rows: pd.DataFrame) -> dict:
    meta = dict(report.meta)
    meta["summary"] = report.summary().as_dict()
    meta["ceilings"] = [c.__dict__ for c in report.ceilings()]
    return {"meta": meta, "rows": records(rows)}
