"""Scaling analysis of a sweep: totals and kernel groups against the swept parameter, linear fits,
and the findings that tripped people up by hand (FLOPs that do not grow with batch size, and
why)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError
from ..common.si_format import si
from ..report.report import Report
from ..store.run_store import Store

# A fitted slope or intercept this small against the largest |value| fitted is rounding, not a
# trend: polyfit's float64 error is ~1e-16 of the values, and no real FLOP, byte or time count
# changes by a billionth.
NOISE = 1e-9
# R² needs this many distinct parameter values: a line passes through any two points, so with two R²
# is 1 whatever the data, and says nothing about whether they grow linearly.
R2_VALUES = 3


@dataclass
class Fit:
    slope: float
    intercept: float
    # None: the line is flat (no variance to explain) or fitted to fewer than R2_VALUES values
    r2: float | None
    values: int = 0  # distinct parameter values fitted

    def why_no_r2(self, param: str) -> str:
        """What the tables say in place of R² (when r2 is None): `constant`, or `only 2 batch_size
        values`."""
        return "constant" if self.slope == 0 else f"only {self.values} {param} values"


@dataclass
class Slice:
    """One line through a sweep: `param` varies, every other swept parameter is held at `fixed`."""

    param: str
    fixed: dict[str, str]
    # (value of param, report), in the order the runs were stored
    points: list[tuple[float, Report]]

    @property
    def label(self) -> str:
        held = ", ".join(f"{k}={v}" for k, v in self.fixed.items())
        return f"{self.param} at {held}" if held else self.param


def slices(runs: list[tuple[dict[str, Any], Report]], where: str = "sweep") -> list[Slice]:
    """A sweep's runs (their parameter values, their reports) as lines to analyse: along every
    numeric parameter that varies, one line per combination of the others. A cartesian product of
    batch size and sequence length gives each batch-size line at each sequence length, and the other
    way round; mixing points of different sequence lengths in one batch-size fit would make every
    finding meaningless."""
    names = list(dict.fromkeys(k for params, _ in runs for k in params))
    varying = [n for n in names if len({params.get(n) for params, _ in runs}) > 1] or names[:1]
    numeric = [n for n in varying if all(_is_number(params.get(n)) for params, _ in runs)]
    if runs and not numeric:
        raise FlopscopeError(
            where,
            f"{', '.join(varying) or 'no parameter'}: a sweep parameter must be a number "
            "to be analysed (e.g. {'batch_size': '8'}, not a name)",
            "sweep numeric values (batch sizes, sequence lengths)",
        )
    out = []
    for param in numeric:
        lines: dict[tuple[tuple[str, Any], ...], list[tuple[float, Report]]] = {}
        for params, report in runs:
            held = tuple((n, params.get(n)) for n in names if n != param)
            lines.setdefault(held, []).append((float(params[param]), report))
        out += [
            Slice(param, {k: v for k, v in held if v is not None}, pts)
            for held, pts in lines.items()
        ]
    longer = [s for s in out if len(s.points) > 1]
    if longer:
        return longer
    # No grid: the parameters moved together (batch size and learning rate scaled at once). One line
    # each.
    return [
        Slice(param, {}, [(float(params[param]), report) for params, report in runs])
        for param in numeric
    ]


def _python_warning(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def sweep_points(
    name: str, store: Store, warn: Callable[[str], None] = _python_warning
) -> list[tuple[dict[str, Any], Report]]:
    """(parameters, report) of every readable run of sweep `name`, in the order stored. A damaged
    run is left out with one `warn(message)` naming it (default: a Python warning), so one bad row
    does not hide the rest."""
    runs = store.runs(name)
    out = []
    for rid, run, params in zip(runs["id"], runs["name"], runs["params"], strict=True):
        try:
            if run in store.damaged:
                raise FlopscopeError(
                    f"run {run}", f"its stored data is damaged ({store.damaged[run]})"
                )
            out.append((params, store.load(int(rid))))
        except FlopscopeError as err:
            warn(f"left out of sweep {name}: {err.problem} (run {run})")
    return out


def load_sweep(
    name: str, store: Store, warn: Callable[[str], None] = _python_warning
) -> list[Slice] | None:
    """The lines to analyse (`slices`) from the stored runs of sweep `name`, points in the order
    stored; None if there is no such sweep. A damaged run is left out with a `warn` (see
    `sweep_points`). Raises FlopscopeError when no run has parameter values, none can be read, or no
    varying parameter is numeric.

        with Store() as store:
            lines = load_sweep("sweep-20250101-120000", store)
    """
    runs = store.runs(sweep=name)
    if runs.empty:
        return None
    if not any(runs["params"]):
        raise FlopscopeError(
            f"sweep {name}",
            "its runs have no parameter values",
            "`flopscope runs --sweep NAME` lists what was stored",
        )
    stored = sweep_points(name, store, warn)
    if not stored:
        raise FlopscopeError(f"sweep {name}", "none of its runs can be read", "profile it again")
    return slices(stored, f"sweep {name}")


def _is_number(value: Any) -> bool:  # a sweep parameter's value as stored: any JSON value
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def point_table(points: list[tuple[float, Report]], param: str) -> pd.DataFrame:
    """One row per sweep point, sorted by the parameter."""
    rows = []
    for value, report in points:
        s = report.summary()
        rows.append(
            {
                param: value,
                "flop": s.total_flop,
                "dram_bytes": s.dram_bytes,
                "duration_s": s.total_time_s,
                "flop_per_sample": s.total_flop / value if value else math.nan,
                "flop_per_s": s.flop_per_s,
                "flops_efficiency": s.flops_efficiency,
                "bandwidth_efficiency": s.bandwidth_efficiency,
                "launches": s.launches,
                "kernels": report.kernels["kernel_full"].nunique(),
                "run": run_name(report),
                "gpu": report.meta.gpu,
                "warning": report.meta.warning or "",
            }
        )
    return pd.DataFrame(rows).sort_values(param, kind="stable").reset_index(drop=True)


def run_name(report: Report) -> str:
    """What a point is called in findings and tables: a stored run's name in the store
    (`Store.load`), else its report file's name, or for a run folder `flopscope profile` made
    (`<run>/report.ncu-rep`) the folder's."""
    if report.meta.run:
        return str(report.meta.run)
    source = Path(str(report.meta.source or "?"))
    return (
        source.parent.name
        if source.name == "report.ncu-rep" and source.parent.name
        else source.name
    )


def group_table(points: list[tuple[float, Report]], param: str) -> pd.DataFrame:
    """Per point and kernel group: count, time, FLOPs, bytes (long format)."""
    frames = []
    for value, report in points:
        g = report.group("name")[
            ["kernel", "kernel_full", "count", "duration_s", "flop", "dram_bytes", "pct_of_peak"]
        ].copy()
        g.insert(0, param, value)
        frames.append(g)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def linear_fit(x: pd.Series, y: pd.Series) -> Fit | None:
    """Least-squares line through the known points; None with fewer than two distinct x. A slope
    whose whole effect over the x range, or an intercept, is within NOISE of the largest |y| is 0:
    constant data then fits as `0 × x + mean` with no R², not as rounding noise with a meaningless
    R². Fewer than R2_VALUES distinct x have no R² either: the line passes through both points, so
    R² would be 1 whatever they are.

    A value of x measured more than once counts once, at the mean of its y (and R² is over those
    means): a repeated run is a second measurement of one point, not more weight for that part of
    the line."""
    ok = x.notna() & y.notna()
    means = y[ok].astype(float).groupby(x[ok].astype(float).to_numpy(), sort=True).mean()
    x, y = means.index.to_numpy(dtype=float), means.to_numpy(dtype=float)
    if len(x) < 2:
        return None
    slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
    bound = NOISE * float(np.abs(y).max())
    if abs(slope) * (x.max() - x.min()) <= bound:
        return Fit(0.0, float(y.mean()), None, len(x))
    intercept = 0.0 if abs(intercept) <= bound else intercept
    residual = ((y - (slope * x + intercept)) ** 2).sum()
    total = ((y - y.mean()) ** 2).sum()
    r2 = float(1.0 - residual / total) if total and len(x) >= R2_VALUES else None
    return Fit(slope, intercept, r2, len(x))


def findings(
    table: pd.DataFrame, groups: pd.DataFrame, param: str, tolerance: float = 0.05
) -> list[str]:
    """Plain-language flags for what a scaling sweep should show and did not."""
    out = _warned(table, param)
    if len(table) < 2:
        return out
    out += _gpus(table, param) + _repeated(table, param)
    if table[param].nunique() < 2:
        # one value of the parameter: nothing about how anything scales with it can be said
        return out
    flop, dram = table["flop"], table["dram_bytes"]
    constant = flop.notna().all() and _flat(flop)
    if flop.notna().all() and dram.notna().all() and flop.nunique() == 1 and dram.nunique() == 1:
        out.append(
            f"FLOPs ({flop.iloc[0]:.4g}) and DRAM bytes ({dram.iloc[0]:.4g}) are identical at every"
            f" {param}: the parameter most likely never reached the program (not passed on the"
            " command line, or overridden inside it, e.g. a hard-coded batch size)"
        )
    elif constant:
        out.append(
            f"FLOPs do not grow with {param} (within 1%): check the parameter reaches the program"
        )
    if flop.isna().any():
        out.append(
            "FLOPs are unknown at some points (tensor-core work not counted?): collect the metrics"
            " the report names and run again"
        )
    per_sample = table["flop_per_sample"].dropna()
    # FLOPs that do not grow make FLOP/param fall as 1/param: said above, not again as a drift.
    if len(per_sample) >= 2 and per_sample.min() > 0 and not constant:
        spread = per_sample.max() / per_sample.min()
        if spread - 1 > tolerance:
            out.append(
                f"FLOP/{param} varies by {_spread(spread)} across {param} (tolerance"
                f" {tolerance:.0%}): FLOPs do not grow in proportion to {param}"
            )
    out += _appearing_kernels(groups, param)
    out += _saturation(table, param)
    return out


def _warned(table: pd.DataFrame, param: str) -> list[str]:
    """Points stored although the program failed or the report is partial: first, since they bend
    the rest."""
    warned = table[table["warning"] != ""] if "warning" in table else table.iloc[:0]
    return [
        f"{param}={row[param]:g} (run {row['run']}) is in the analysis although {row['warning']}:"
        " check it before trusting the fits"
        for _, row in warned.iterrows()
    ]


def _spread(ratio: float) -> str:
    """largest / smallest as people read it: `3.1%` up to twice, then `64×`, `36,081×` (not
    `3608057.2%`)."""
    if ratio <= 2:
        return f"{ratio - 1:.1%}"
    return (
        f"{ratio:.3g}× (largest/smallest)" if ratio < 1000 else f"{ratio:,.0f}× (largest/smallest)"
    )


def _flat(values: pd.Series) -> bool:
    mean = values.abs().mean()
    return bool(mean) and (values.max() - values.min()) / mean < 0.01


def _appearing_kernels(groups: pd.DataFrame, param: str) -> list[str]:
    if groups.empty:
        return []
    values = sorted(groups[param].unique())
    out = []
    for (_full, kernel), rows in groups.groupby(
        ["kernel_full", "kernel"], sort=False, observed=True
    ):
        present = sorted(rows[param].unique())
        if len(present) != len(values):
            out.append(
                f"kernel {kernel} runs only at {param} = {', '.join(f'{v:g}' for v in present)} "
                "(a different algorithm chosen at other sizes?)" + _padded(rows, param)
            )
    return out


def _padded(rows: pd.DataFrame, param: str) -> str:
    """A kernel chosen for a range of sizes that does the same FLOPs per launch at each: it runs
    whole tiles, padding the smaller sizes (on an H100, nn.Linear at batch 8, 16 and 32 ran one
    32-row tile, 484 MFLOP each: tests/data/gpu). Said, since it is what makes FLOPs stop following
    the parameter."""
    per_launch = (rows["flop"] / rows["count"]).groupby(rows[param]).mean()
    if (
        len(per_launch) < 2
        or per_launch.isna().any()
        or not (per_launch > 0).all()
        or not _flat(per_launch)
    ):
        return ""
    return (
        f"; its FLOPs per launch are the same ({si(per_launch.iloc[0], 'FLOP')}) at each: most"
        f" likely it runs whole tiles, so the smaller {param} values do padded work, which the"
        " counters count"
    )


def _gpus(table: pd.DataFrame, param: str) -> list[str]:
    gpus = table["gpu"].dropna()
    if gpus.nunique() < 2:
        return []
    where = "; ".join(
        f"{gpu} at {param} = {_values(table.loc[gpus.index[gpus == gpu], param])}"
        for gpu in gpus.unique()
    )
    return [
        f"the points ran on different GPUs ({where}): times, FLOP/s and efficiencies compare the"
        f" GPUs as much as the {param} values"
    ]


def _repeated(table: pd.DataFrame, param: str) -> list[str]:
    counts = table[param].value_counts(sort=False)
    out = [
        f"{param} = {value:g} appears {n} times"
        f" ({', '.join(table.loc[table[param] == value, 'run'])}): the fits and the efficiency"
        " trend use the mean of its points"
        for value, n in counts[counts > 1].items()
    ]
    if len(counts) == 1:
        out.append(
            f"{param} has one value ({counts.index[0]:g}) at every point: nothing to fit or compare"
        )
    return out


def _values(values: pd.Series) -> str:
    return ", ".join(f"{v:g}" for v in values.unique())


def _saturation(table: pd.DataFrame, param: str) -> list[str]:
    """'Saturates' only when efficiency rises and then stays within 90% of its best to the largest
    value; when it ends below that, it falls, and the finding says so."""
    # one value per param value
    eff = table.groupby(param, sort=True)["flops_efficiency"].mean().dropna()
    if len(eff) < 3:
        return []
    best = eff.max()
    if best <= 1.1 * eff.min():
        return []  # flat: nothing saturates or falls
    near = eff >= 0.9 * best
    first = near.idxmax()  # the smallest param value within 90% of the best
    if not near.iloc[-1]:
        return [
            f"FLOP %Peak falls after {param} = {eff.idxmax():g} (best {best:.1%}) to "
            f"{eff.iloc[-1]:.1%} at {param} = {eff.index[-1]:g}"
        ]
    if eff.index[0] < first < eff.index[-1] and near.loc[first:].all():
        # The value measured there, as the table shows it: 90% of the best is only the threshold.
        return [
            f"FLOP %Peak saturates from {param} = {first:g} (reaches {eff.loc[first]:.1%}, ≥ 90% of"
            f" its best {best:.1%})"
        ]
    return []
