"""`flopscope model` and `flopscope reconcile`: analytic FLOPs of a PyTorch model, PALEO-style
predicted times, and the analytic count next to what ncu measured per NVTX range. torch is needed
only to count."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.text import Text

from ...core import FlopscopeError, read_report
from ...core.analysis import (
    ACTIVATIONS,
    BYTES,
    CONVENTION,
    INTENSITY,
    ModelFlops,
    Prediction,
    Reconciliation,
    check_ppp,
    count_model,
    load_model_json,
    parse_shape,
    predict_all,
    reconcile,
)
from ...core.common import display_text
from ...core.export import json_ready
from ..presentation import format as fmt
from ..presentation.reconcile_table import TOTALS, shown_modules
from ..presentation.step_mfu import timed_step
from ..presentation.text_report import Spec, console, fitted_table, print_hidden


def _count(args: argparse.Namespace) -> ModelFlops:
    # '' is an error, not unset
    shape = parse_shape(args.input_shape) if args.input_shape is not None else None
    return count_model(
        args.spec, shape, train=args.train, dtype=args.dtype, input_dtype=args.input_dtype
    )


def _stoppable(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Ctrl-C (or SIGTERM) during `model` / `reconcile`: exit 130 with just "stopped"; these
    commands run no ncu, so the main handler's "(ncu and the program it profiled were stopped too)"
    would mislead."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except KeyboardInterrupt:
            print("flopscope: stopped", file=sys.stderr)
            return 130

    return run


@_stoppable
def cmd_model(args: argparse.Namespace) -> int:
    check_ppp(args.ppp)
    _check_depth(args.depth)
    model = _count(args)
    predictions, notes = predict_all(
        model.step_flop,
        args.gpu,
        model.dtype,
        args.ppp,
        model.batch,
        nbytes=model.step_bytes,
        families=model.family_flops(),
    )
    notes = model.notes + notes
    if args.json:
        doc = {**model.to_json(), "predictions": [p.as_dict() for p in predictions], "notes": notes}
        _dump(doc)
        return 0
    out_console = console()
    for line in _model_lines(model):
        out_console.print(line)
    _print_table(
        out_console, f"Modules (depth <= {args.depth})", *_modules_table(model, args.depth)
    )
    _print_table(
        out_console, _predictions_title(predictions, model), *_predictions_table(predictions)
    )
    for note in [
        *notes,
        CONVENTION + ".",
        INTENSITY + "; " + ACTIVATIONS + ".",
        BYTES[0].upper() + BYTES[1:] + ".",
    ]:
        out_console.print(Text(note))
    return 0


def _check_steps_and_tol(steps: int, tol: float) -> None:
    """Each bad option by its own name: one message for both left the user to guess which was
    wrong."""
    if steps < 1:
        raise FlopscopeError(
            f"--steps {steps}", "a report holds 1 training step or more", "e.g. --steps 1"
        )
    if not 0 < tol < 1:  # NaN fails both comparisons
        raise FlopscopeError(
            f"--tol {tol:g}",
            "a tolerance is a fraction between 0 and 1 (exclusive)",
            "e.g. --tol 0.1 flags ratios outside 0.9-1.1",
        )


def _check_depth(depth: int | None) -> None:
    if depth is not None and depth < 0:
        raise FlopscopeError(
            f"--depth {depth}", "a module depth is 0 (the model alone) or more", "e.g. --depth 2"
        )


def _dump(doc: dict) -> None:
    # strict JSON: an unknown number is null, never NaN or Infinity (which json.dump writes and JSON
    # has not)
    json.dump(json_ready(doc), sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")


def _model_lines(m: ModelFlops) -> list[Text]:
    kind = "training step (forward + backward)" if m.train else "forward pass"
    shape = "x".join(map(str, m.input_shape)) + (f" {m.input_dtype}" if m.input_dtype else "")
    lines = [
        Text(
            f"Model {m.model} ({m.model_type}), input {shape}, {m.dtype}, {kind}; counted on the"
            f" {m.method}"
        ),
        Text(
            f"Parameters {fmt.si(m.params)} ({fmt.si(m.param_bytes, 'B')}); activations"
            f" {fmt.si(m.activation_bytes, 'B')}; arithmetic intensity {fmt.ratio(m.intensity)}"
            " FLOP/B"
        ),
    ]
    flops = (
        f"Forward {fmt.si(m.forward_flop, 'FLOP')} ({fmt.si(m.forward_flop / m.batch, 'FLOP')} per"
        " sample)"
    )
    if m.backward_flop is not None:
        flops += (
            f"; backward {fmt.si(m.backward_flop, 'FLOP')}; backward/forward"
            f" {fmt.ratio(m.backward_ratio)}; step {fmt.si(m.step_flop, 'FLOP')}"
        )
    lines.append(Text(flops))
    families = ", ".join(f"{k} {fmt.pct(100 * v)}" for k, v in m.family_share().items())
    ops = ", ".join(f"{k} {fmt.pct(100 * v)}" for k, v in m.op_share().items())
    lines.append(Text(f"Share of FLOPs: {families} (by operator: {ops})"))
    return lines


def _print_table(
    out_console: Console, title: str, specs: list[Spec], rows: list[list[str]]
) -> None:
    """A title line, then the table laid out as `flopscope report`'s: every header and cell on one
    line, the first column (a name) cut where it must be, and columns that do not fit dropped and
    named."""
    out_console.print(Text(title))
    table, hidden = fitted_table(specs, rows, out_console.width)
    out_console.print(table)
    print_hidden(out_console, hidden)


def _modules_table(m: ModelFlops, depth: int) -> tuple[list[Spec], list[list[str]]]:
    """Units in the headers, so a value never wraps away from its unit at 80 columns."""
    specs = [
        Spec("Module", False),
        Spec("Type", False),
        Spec("Fwd FLOP"),
        Spec("Bwd FLOP"),
        Spec("Params", priority=1),
        Spec("Act. bytes", priority=2),
        Spec("FLOP/B", priority=3),
    ]
    rows = [
        [
            "  " * mod.depth + (mod.name or "(model)"),
            mod.type,
            fmt.si(mod.forward_flop),
            fmt.si(mod.backward_flop),
            fmt.si(mod.params),
            fmt.si(mod.activation_bytes),
            fmt.ratio(mod.intensity),
        ]
        for mod in m.modules
        if mod.depth <= depth and not (mod.name and not mod.forward_flop and not mod.params)
    ]
    if not m.train:  # a forward pass has no backward column to show
        specs, rows = specs[:3] + specs[4:], [r[:3] + r[4:] for r in rows]
    return specs, rows


# Database ceilings as the prediction table names them (TC: tensor cores).
CEILING_NAMES = {
    "fp64": "FP64",
    "fp32": "FP32",
    "tensor_tf32": "TF32 TC",
    "tensor_fp16": "FP16 TC",
    "tensor_bf16": "BF16 TC",
    "tensor_fp64": "FP64 TC",
}


def _predictions_title(predictions: list[Prediction], m: ModelFlops) -> str:
    """What every row shares (the FLOPs, bytes and PPP) is said once here rather than in a column of
    its own."""
    what = "training step" if m.train else "forward pass"
    p = predictions[0]
    moved = f", {fmt.si(p.bytes, 'B')}" if p.bytes is not None else ""
    return (
        f"Predicted time per {what} of {fmt.si(p.flop, 'FLOP')}{moved} at PPP {p.ppp:g} (roofline:"
        " the larger of FLOPs / (peak x PPP) and bytes / DRAM bandwidth)"
    )


def _predictions_table(predictions: list[Prediction]) -> tuple[list[Spec], list[list[str]]]:
    """One row per GPU, named by its database key (`a100-sxm4-80gb`), which fits where its full name
    does not."""
    specs = [
        Spec("GPU", False),
        Spec("Ceiling", False),
        Spec("Peak FLOP/s"),
        Spec("DRAM B/s", priority=1),
        Spec("Time"),
        Spec("Bound", False),
        Spec("Samples/s"),
    ]
    rows = [
        [
            p.gpu_key,
            "+".join(CEILING_NAMES.get(c, c) for c in p.ceiling.split("+")),
            fmt.si(p.peak_flop_per_s),
            fmt.si(p.dram_bytes_per_s),
            fmt.seconds(p.seconds) if p.seconds else "n/a",
            p.bound if p.seconds else "n/a",
            fmt.si(p.per_second) if p.per_second is not None else "n/a",
        ]
        for p in predictions
    ]
    return specs, rows


def _analytic(args: argparse.Namespace) -> ModelFlops:
    if args.spec.endswith(".json") and Path(args.spec).is_file():
        # --dtype stays allowed: against a JSON it only picks the peak utilization is taken against
        given = [
            flag
            for flag, value in (
                ("--input-shape", args.input_shape),
                ("--train", args.train),
                ("--input-dtype", args.input_dtype),
            )
            if value not in (None, False)
        ]
        if given:
            raise FlopscopeError(
                args.spec,
                f"{', '.join(given)} {'comes' if len(given) == 1 else 'come'} from this JSON",
                "leave them out (--dtype alone may pick another peak)",
            )
        return load_model_json(args.spec)
    return _count(args)


@_stoppable
def cmd_reconcile(args: argparse.Namespace) -> int:
    _check_steps_and_tol(args.steps, args.tol)
    _check_depth(args.depth)
    model = _analytic(args)
    report = read_report(args.path, gpu=args.gpu)
    step_time, source = args.step_time, "--step-time"
    # profile --modules' timing run
    if step_time is None and (timed := timed_step(report)) is not None:
        step_time, source = timed
    result = reconcile(
        report,
        model,
        tol=args.tol,
        steps=args.steps,
        step_time_s=step_time,
        gpu=args.gpu,
        precision=args.dtype,
        step_time_source=source,
    )
    if args.json:
        _dump({**result.to_json(), "convention": CONVENTION, "analytic": model.to_json()})
        return 0
    title = (
        f"Reconcile {result.report} with {model.model} ({model.model_type}), "
        f"input {'x'.join(map(str, model.input_shape))}, {result.precision}, {result.steps} step(s)"
    )
    if not args.no_tui and sys.stdin.isatty() and sys.stdout.isatty():
        from ..app.launch import run_screen
        from ..app.screens.reconcile import ReconcileScreen

        return run_screen(
            ReconcileScreen(
                title,
                result,
                _reconcile_lines(result),
                model.train,
                args.depth,
                report=report,
                model=model,
            )
        )
    out_console = console()
    out_console.print(Text(display_text(title)))
    titles, rows = reconcile_rows(result, model.train, args.depth)
    _print_table(
        out_console,
        "Measured / analytic FLOPs per step",
        [_reconcile_spec(t) for t in titles],
        [[str(c) for c in r] for r in rows],
    )
    for line in _reconcile_lines(result):
        out_console.print(Text(display_text(line)))
    return 0


def reconcile_rows(
    r: Reconciliation, train: bool, depth: int | None
) -> tuple[list[str], list[list[Text]]]:
    """Titles and cells of the reconciliation table: shared by the CLI table and the app's screen.
    FLOPs without a unit (`3.72 M`; the title says FLOPs), so a value never wraps away from its
    unit."""
    titles = ["Module", "Type", "Fwd analytic", "Fwd measured", "Fwd ratio"]
    if train:
        titles += ["Bwd analytic", "Bwd measured", "Bwd ratio"]
    rows = []
    for row in shown_modules(r, depth):
        cells = [
            row.name or TOTALS,
            row.type,
            fmt.si(row.analytic_forward),
            _at_least(fmt.si(row.measured_forward), "forward" in row.lower_bound),
            _at_least(fmt.ratio(row.ratio_forward), "forward" in row.lower_bound),
        ]
        if train:
            cells += [
                fmt.si(row.analytic_backward),
                _at_least(fmt.si(row.measured_backward), "backward" in row.lower_bound),
                _at_least(fmt.ratio(row.ratio_backward), "backward" in row.lower_bound),
            ]
        rows.append([Text(c) for c in [*cells, row.flag]])
    return [*titles, "Flag"], rows


def _reconcile_spec(title: str) -> Spec:
    """At 80 columns the measured FLOPs drop first (the ratio beside the analytic count gives them),
    then Type."""
    if title in ("Module", "Type", "Flag"):
        return Spec(title, False, priority=1 if title == "Type" else 0)
    return Spec(title, priority=2 if "measured" in title else 0)


def _at_least(text: str, lower_bound: bool) -> str:
    """A measured figure (or a ratio of one); `≥` where launches with an unknown total add only
    their known precisions."""
    return f"≥ {text}" if lower_bound and text and text != "-" else text


def _reconcile_lines(r: Reconciliation) -> list[str]:
    phases = ", ".join(
        f"{k} {_at_least(fmt.si(v, 'FLOP'), k in r.lower_bounds)}"
        for k, v in r.measured.items()
        if v
    )
    lines = [
        f"Measured per step by phase: {phases or 'no FLOP counts'}",
        (
            f"Backward/forward: analytic {fmt.ratio(r.analytic_backward_ratio) or '-'}, "
            f"measured {fmt.ratio(r.measured_backward_ratio) or '-'}"
        ),
    ]
    if r.whole_run_ratio is not None:
        lower = "step" in r.lower_bounds
        lines.append(
            f"Whole report per step: measured {_at_least(fmt.si(r.measured_step, 'FLOP'), lower)} /"
            f" analytic {fmt.si(r.analytic_step, 'FLOP')} {'≥' if lower else '='}"
            f" {fmt.ratio(r.whole_run_ratio)} ({r.whole_run_flag})"
        )
    if r.step_time_s:
        lines.append(f"Step time {fmt.seconds(r.step_time_s)} ({r.step_time_source})")
    if r.step_time_s and r.peak_flop_per_s:
        lines.append(
            f"Utilization against the {r.precision} peak {fmt.si(r.peak_flop_per_s, 'FLOP/s')} of"
            f" {r.gpu} ({r.peak_source}): analytic FLOPs {_pct(r.utilization_analytic)}, measured"
            f" FLOPs {_at_least(_pct(r.utilization_measured), 'step' in r.lower_bounds)} (FLOPs per"
            " step / (step time x peak))"
        )
    lines.append(
        f"Ratio = measured / analytic. over (> {1 + r.tol:g}): work the analytic count leaves out "
        "(elementwise, normalization, bias, recomputation, padded tiles); under (< "
        f"{1 - r.tol:g}): tensor-core work not counted, kernels ncu did not profile, or fewer-FLOP "
        "algorithms (Winograd, FFT)."
    )
    return [*lines, *r.notes, CONVENTION + "."]


def _pct(value: float | None) -> str:
    return fmt.pct(100 * value) if value is not None else "-"
