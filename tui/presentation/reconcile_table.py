"""The reconcile screen's module table as a TableModel's rows and columns: one row per module (the
model's phase totals first), so that it sorts, filters and drops columns as the kernel table
does."""

from __future__ import annotations

import pandas as pd

from ...core.analysis import Reconciliation
from . import format as fmt
from .columns import Column

# the row of module "" (the whole model), as the CLI table names it
TOTALS = "(model: phase totals)"


def shown_modules(result: Reconciliation, depth: int | None) -> list:
    """The modules `--depth` keeps (`layer1.0` is depth 2); the totals row always shows."""
    return [
        m for m in result.modules if depth is None or not m.name or m.name.count(".") + 1 <= depth
    ]


def reconcile_frame(result: Reconciliation, depth: int | None = None) -> pd.DataFrame:
    """One row per module shown: `module` as displayed, `module_name` as the report's ranges name it
    ("" for the totals), the figures, and whether a measured figure is a lower bound (`≥`)."""
    rows = [
        {
            "module": m.name or TOTALS,
            "module_name": m.name,
            "type": m.type,
            "analytic_forward": m.analytic_forward,
            "measured_forward": m.measured_forward,
            "ratio_forward": m.ratio_forward,
            "analytic_backward": m.analytic_backward,
            "measured_backward": m.measured_backward,
            "ratio_backward": m.ratio_backward,
            "flag": m.flag,
            "lower_forward": "forward" in m.lower_bound,
            "lower_backward": "backward" in m.lower_bound,
        }
        for m in shown_modules(result, depth)
    ]
    frame = pd.DataFrame(
        rows,
        columns=[
            "module",
            "module_name",
            "type",
            "analytic_forward",
            "measured_forward",
            "ratio_forward",
            "analytic_backward",
            "measured_backward",
            "ratio_backward",
            "flag",
            "lower_forward",
            "lower_backward",
        ],
    )
    for name in (
        "analytic_forward",
        "measured_forward",
        "ratio_forward",
        "analytic_backward",
        "measured_backward",
        "ratio_backward",
    ):
        frame[name] = pd.to_numeric(frame[name], errors="coerce")  # None -> NaN: sorts, shows blank
    return frame


def reconcile_columns(train: bool) -> list[Column]:
    """As the CLI table: FLOPs without a unit (the titles say FLOPs). On a narrow terminal the
    measured FLOPs drop first (the ratio beside the analytic count gives them), then Type; the
    module, the ratios and the flag stay."""

    def phase(side: str, short: str) -> list[Column]:
        lower = f"lower_{side}"
        # as wide as their titles (a one-line header): `≥ 1.23 G` fits in them
        return [
            Column(f"analytic_{side}", f"{short} analytic", fmt.si, 1, 13),
            Column(f"measured_{side}", f"{short} measured", fmt.si, 3, 13, at_least=lower),
            Column(f"ratio_{side}", f"{short} ratio", fmt.ratio, 0, 10, at_least=lower),
        ]

    return [
        Column("module", "Module", fmt.text, 0, 28, numeric=False),
        Column("type", "Type", fmt.text, 2, 16, numeric=False),
        *phase("forward", "Fwd"),
        *(phase("backward", "Bwd") if train else []),
        Column("flag", "Flag", fmt.text, 0, 5, numeric=False),
    ]
