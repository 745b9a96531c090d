"""One sweep line's analysis as flopscope shows it: the per-point table, the linear fits and the
findings of `core.scaling`, the fit lines and the JSON document. The Sweep screen and `flopscope
sweep` both use it, so the app and the CLI never disagree."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ...core import Report
from ...core.analysis import Fit, Slice, findings, group_table, linear_fit, point_table
from ...core.export import records
from . import format as fmt

# The fitted columns: name, title and how their values read.
FITTED: tuple[tuple[str, str, Callable[[float], str]], ...] = (
    ("flop", "FLOP", fmt.si),
    ("dram_bytes", "DRAM B", lambda v: fmt.si(v, "B")),
    ("duration_s", "Time", fmt.seconds),
)


@dataclass(frozen=True)
class Analysis:
    """Everything shown for one line, computed once from its points."""

    table: pd.DataFrame  # point_table, sorted by the parameter
    groups: pd.DataFrame  # group_table: per point and kernel group
    fits: dict[str, Fit | None]
    notes: list[str]


def analyse(points: list[tuple[float, Report]], param: str, tolerance: float = 0.05) -> Analysis:
    """`tolerance`: allowed drift of FLOP/param, as `flopscope sweep --tolerance`."""
    table = point_table(points, param)
    groups = group_table(points, param)
    fits = {name: linear_fit(table[param], table[name]) for name, _, _ in FITTED}
    return Analysis(table, groups, fits, findings(table, groups, param, tolerance))


def fit_line(title: str, fit: Fit | None, param: str, text: Callable[[float], str]) -> str:
    """`FLOP = 17.2 T × batch_size − 820 k  (R² 0.9971)`, or why there is no fit. Rounding noise in
    the slope and intercept is already 0 (`linear_fit`)."""
    if fit is None:
        return f"{title}: no fit (fewer than two {param} values with data)"
    sign = "−" if fit.intercept < 0 else "+"
    r2 = f"R² {fit.r2:.4f}" if fit.r2 is not None else f"R² n/a: {fit.why_no_r2(param)}"
    return (
        f"{title} = {text(fit.slope) or '0'} × {param} {sign} {text(abs(fit.intercept)) or '0'} "
        f" ({r2})"
    )


def sweep_json(name: str, lines: list[Slice], tolerance: float, judged: str | None) -> dict:
    """What `open SWEEP --json` and `sweep --json` print: the sweep's name, the GPU --gpu judged it
    against, and per line its points (each with its `run`), kernel groups, fits and findings. A
    Sweep screen export carries the same as its meta, so an exported table can be traced to the
    stored runs and read with its fits."""
    doc = []
    for line in lines:
        a = analyse(line.points, line.param, tolerance)
        doc.append(
            {
                "param": line.param,
                "fixed": line.fixed,
                "points": records(a.table),
                "groups": records(a.groups.drop(columns=["kernel_full"])),
                "fits": {k: v.__dict__ if v else None for k, v in a.fits.items()},
                "findings": a.notes,
            }
        )
    return {"sweep": name, "judged_against": judged, "analyses": doc}
