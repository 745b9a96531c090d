"""Reading runs against each other and against a model: diff, the CI check, sweep scaling fits,
PyTorch FLOP counts, predictions and their reconciliation with what ncu measured."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .check import EVERY_METRIC, GATED, Check, check_runs, other_gpus, other_metrics
    from .diff import ceilings_apart, diff_runs, gpus_apart, group_key, groups_of, run_total
    from .model_flops import (
        ACTIVATIONS,
        BYTES,
        CONVENTION,
        DTYPE_BYTES,
        INPUT_DTYPES,
        INTENSITY,
        ModelFlops,
        count_model,
        load_model_json,
        parse_shape,
    )
    from .predict import DEFAULT_GPUS, Prediction, check_ppp, predict_all
    from .reconciliation import Reconciliation, module_report, reconcile
    from .scaling import (
        Fit,
        Slice,
        findings,
        group_table,
        linear_fit,
        load_sweep,
        point_table,
        slices,
        sweep_points,
    )

_EXPORTS = {
    "EVERY_METRIC": "check",
    "Check": "check",
    "GATED": "check",
    "check_runs": "check",
    "other_gpus": "check",
    "other_metrics": "check",
    "ceilings_apart": "diff",
    "diff_runs": "diff",
    "gpus_apart": "diff",
    "group_key": "diff",
    "groups_of": "diff",
    "run_total": "diff",
    "ACTIVATIONS": "model_flops",
    "BYTES": "model_flops",
    "CONVENTION": "model_flops",
    "DTYPE_BYTES": "model_flops",
    "INPUT_DTYPES": "model_flops",
    "INTENSITY": "model_flops",
    "ModelFlops": "model_flops",
    "count_model": "model_flops",
    "load_model_json": "model_flops",
    "parse_shape": "model_flops",
    "DEFAULT_GPUS": "predict",
    "Prediction": "predict",
    "check_ppp": "predict",
    "predict_all": "predict",
    "Reconciliation": "reconciliation",
    "module_report": "reconciliation",
    "reconcile": "reconciliation",
    "Fit": "scaling",
    "Slice": "scaling",
    "findings": "scaling",
    "group_table": "scaling",
    "linear_fit": "scaling",
    "load_sweep": "scaling",
    "point_table": "scaling",
    "slices": "scaling",
    "sweep_points": "scaling",
}
__all__ = [
    "ACTIVATIONS",
    "BYTES",
    "CONVENTION",
    "DEFAULT_GPUS",
    "DTYPE_BYTES",
    "EVERY_METRIC",
    "GATED",
    "INPUT_DTYPES",
    "INTENSITY",
    "Check",
    "Fit",
    "ModelFlops",
    "Prediction",
    "Reconciliation",
    "Slice",
    "ceilings_apart",
    "check_ppp",
    "check_runs",
    "count_model",
    "diff_runs",
    "findings",
    "gpus_apart",
    "group_key",
    "group_table",
    "groups_of",
    "linear_fit",
    "load_model_json",
    "load_sweep",
    "module_report",
    "other_gpus",
    "other_metrics",
    "parse_shape",
    "point_table",
    "predict_all",
    "reconcile",
    "run_total",
    "slices",
    "sweep_points",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
