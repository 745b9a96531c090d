"""Every command's arguments: the `flopscope` parser. argparse and constants only: `--help`,
`--version` and a usage error are answered from here without importing pandas, pyarrow or Textual
(main.py imports a command's module only when that command runs; tests/test_layers.py checks)."""

from __future__ import annotations

import argparse
import math
from typing import NoReturn

from ... import __version__
from ...core.analysis import DEFAULT_GPUS, DTYPE_BYTES, INPUT_DTYPES
from ...core.ncu import METRIC_SETS, REPLAY_MODES, TIMING_LIMIT_S
from ...core.table import GROUPINGS

# Rows a printed table shows unless --top or --all says otherwise: a terminal never needs 100k
# formatted rows, and formatting them costs minutes and gigabytes; --json always has every row.
TABLE_ROWS = 1000

# `model`'s built-in models
BUILTINS = "vgg16, vgg19, resnet18, resnet34, resnet50, googlenet, mlp, transformer"
DESCRIPTION = (
    "`flopscope`: the command line. Every view has a non-interactive form (table or JSON)."
)


_DEPTH = "with --by module: nodes down to depth N only (the root is 0; default: every node)"


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line, like every other input error (argparse would print its usage
    block too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}; see `{self.prog} --help`\n")


def _view_args(p: argparse.ArgumentParser, modules: bool = False) -> None:
    p.add_argument(
        "path",
        help=(
            "an .ncu-rep report or ncu CSV (raw or details page), or the name or id of a stored run"
        ),
    )
    by = [*GROUPINGS, *(["module"] if modules else [])]
    p.add_argument(
        "--by",
        choices=by,
        default="name",
        help="group rows (default: name)"
        + (
            "; module: the model's module tree from its NVTX ranges (profile --modules)"
            if modules
            else ""
        ),
    )
    p.add_argument(
        "--sort",
        metavar="COLUMN",
        help=(
            "sort by a column: a title of the table (Time, FLOP, %%Peak, ...; any case) or a key of"
            " the --json rows (flop_fp32, l2_bytes, ...), shown while sorted by it; unknown values"
            " last either way (default: Time)"
        ),
    )
    p.add_argument("--asc", action="store_true", help="sort ascending")
    _where_arg(p, "keep the rows where EXPR holds")
    p.add_argument(
        "--gpu", metavar="NAME", help="GPU for datasheet ceilings (see `flopscope gpus`)"
    )
    _no_cache_arg(p)


def _size(text: str) -> tuple[int, int]:
    """`120x40` -> (120, 40): a picture's width and height in cells, at least a readable
    roofline's."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WxH (120x40)") from None
    if width < 60 or height < 20 or width > 1000 or height > 500:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least 60x20 and at most 1000x500")
    return width, height


def _where_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--where",
        metavar="EXPR",
        help=(
            f"{what}: `time > 5us and bound == dram`, `prec ~ tc`, `not kernel ~ nccl`; a column by"
            " its title or --json key, numbers with units (5us, 1GB, 2TFLOP/s, 10%%), == != < <= >"
            " >= on numbers, == != and ~ !~ (regex) on text, and/or/not, parentheses (docs/cli.md)"
        ),
    )


def _no_cache_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-cache",
        action="store_true",
        help=(
            "read the report afresh, from neither cache: the table cache (a report of 1 MB or more"
            " is read once, its table kept as Parquet in the data folder) nor the output cache (a"
            " repeated report command prints what it printed while nothing it read has changed)"
        ),
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="flopscope", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"flopscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("report", help="print the kernel table of a report")
    _view_args(p, modules=True)
    p.add_argument(
        "--model",
        metavar="MODEL.json",
        help=(
            "with --by module: the analytic FLOPs of `flopscope model ... --json` beside each"
            " module's measured"
        ),
    )
    p.add_argument(
        "--depth", type=whole(0, "leave it out for the whole tree"), metavar="N", help=_DEPTH
    )
    p.add_argument(
        "--top",
        type=whole(1, "leave it out for every row"),
        metavar="N",
        help="only the first N rows (N >= 1)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help=(
            f"print every row; a table of more than {TABLE_ROWS} rows (--by launch of a long run)"
            f" otherwise shows its first {TABLE_ROWS} and says how many it left out"
        ),
    )
    p.add_argument("--json", action="store_true", help="one JSON object: meta and rows")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help=(
            "write the printed report as a picture instead: OUT.svg or OUT.html (rich's own"
            " export), or OUT.txt"
        ),
    )
    p.add_argument(
        "--source",
        metavar="LAUNCH_ID_OR_NAME",
        help=(
            "the hottest SASS lines of one launch (by warp samples; --top N lines, 20 by default):"
            " a launch ID, or a kernel name regex (its longest launch); an .ncu-rep with ncu's"
            " SourceCounters (--set full)"
        ),
    )
    p.add_argument(
        "--columns",
        metavar="A,B,C",
        help=(
            "the printed table's columns, in this order after the name: titles or --json keys, any"
            " case (Time,%%Roof,registers,sol_dram_pct); the app's column chooser (C) saves its own"
            " (--json: every key)"
        ),
    )
    _roof_arg(p)

    p = sub.add_parser(
        "export", help="write the kernel table to CSV, Parquet or JSON (by extension)"
    )
    _view_args(p, modules=True)
    p.add_argument(
        "--depth", type=whole(0, "leave it out for the whole tree"), metavar="N", help=_DEPTH
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="OUT.csv, OUT.parquet or OUT.json"
    )
    p.add_argument(
        "--columns",
        metavar="A,B,C",
        help=(
            "only these columns, in this order after the name, as `report --columns` takes them:"
            " titles or --json keys, any case (Time,%%Roof,registers); default: every column of the"
            " rows"
        ),
    )
    p.add_argument(
        "--raw-csv",
        action="store_true",
        help=(
            "write text cells of a CSV exactly as they are; by "
            "default a cell starting with = + - @ (a formula to a spreadsheet) gets a leading '"
        ),
    )
    _roof_arg(p)

    p = sub.add_parser(
        "roofline", help="write the roofline of a report as a picture (SVG, HTML or text)"
    )
    p.add_argument("path", help="an .ncu-rep report or ncu CSV, or the name or id of a stored run")
    p.add_argument(
        "--by", choices=list(GROUPINGS), default="name", help="one point per (default: name)"
    )
    p.add_argument(
        "--gpu", metavar="NAME", help="GPU for datasheet ceilings (see `flopscope gpus`)"
    )
    _no_cache_arg(p)
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="OUT.svg, OUT.html or OUT.txt"
    )
    p.add_argument(
        "--size",
        type=_size,
        default=(120, 40),
        metavar="WxH",
        help="the picture's size in terminal cells (default 120x40)",
    )
    _roof_arg(p)

    p = sub.add_parser("gpus", help="list the GPU database with sources")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON list: every GPU with its key, peaks, clocks, memory and source",
    )

    p = sub.add_parser(
        "profile",
        help="run COMMAND under ncu, locally or on --host, and show its kernels",
        usage="flopscope profile [options] -- COMMAND [ARGS...]",
    )
    add_profile_args(p)

    p = sub.add_parser(
        "demo",
        help=(
            "open the bundled example in the app: a bf16 transformer training step "
            "profiled on an H100 (--no-tui prints its table)"
        ),
    )
    p.add_argument(
        "--no-tui", action="store_true", help="print the kernel table instead of opening the app"
    )
    p.add_argument(
        "--json", action="store_true", help="with --no-tui: one JSON object, meta and rows"
    )
    _open_model_arg(p)

    p = sub.add_parser(
        "open", help="open a report file or a stored run in the terminal app (piped: its table)"
    )
    p.add_argument("path", help="a report file, or the name or id of a stored run or sweep")
    p.add_argument(
        "--gpu",
        metavar="NAME",
        help="GPU for datasheet ceilings, for a file, a stored run or every point of a sweep",
    )
    p.add_argument(
        "--no-tui", action="store_true", help="print the kernel table instead of opening the app"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object, meta and rows, instead of the app",
    )
    _roof_arg(p)
    _no_cache_arg(p)
    _open_model_arg(p)
    _runs_commands(sub)
    _sweep_command(sub)
    _model_commands(sub)
    _check_command(sub)
    _doctor_command(sub)
    _ceilings_command(sub)
    _serve_command(sub)
    return parser


def _open_model_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        metavar="MODEL.json",
        help=(
            "open on the module tree with the analytic FLOPs of `flopscope model ... --json` beside"
            " each module's measured (as `m` there); piped: `report --by module --model`"
        ),
    )


def _roof_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--roof",
        choices=["clock", "datasheet", "measured"],
        default="clock",
        help=(
            "the roof %%Peak, %%Roof and Bound are judged against: the report's peaks at the"
            " measured clock (default), the datasheet's as quoted, or the ceilings `flopscope"
            " ceilings` measured for this GPU (stored)"
        ),
    )


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """Options before the first `--`, the profiled command after it (never re-parsed)."""
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1 :]
    return argv, []


def add_profile_args(p: argparse.ArgumentParser, many_hosts: bool = False) -> None:
    if many_hosts:
        _ssh_args(
            p,
            "run on HOST through ssh; repeat to spread points over hosts, one at a time each",
            many=True,
        )
    else:
        _ssh_args(p, "run on HOST through the system ssh (its ~/.ssh/config applies)")
    p.add_argument(
        "--ncu", default="ncu", metavar="PATH", help="ncu on the target (default: ncu on PATH)"
    )
    p.add_argument("--remote-cwd", metavar="DIR", help="working directory of COMMAND on the target")
    p.add_argument(
        "--env", action="append", default=[], metavar="K=V", help="environment for COMMAND (repeat)"
    )
    p.add_argument(
        "--metrics",
        default="roofline",
        metavar="SET",
        help=f"{'|'.join([*METRIC_SETS, 'full'])}|NAME,... (default: roofline)",
    )
    p.add_argument(
        "-k", "--kernel-name", metavar="FILTER", help="ncu's kernel filter, e.g. regex:gemm"
    )
    p.add_argument(
        "--nvtx-include",
        action="append",
        default=[],
        metavar="EXPR",
        help="ncu's NVTX filter (repeat)",
    )
    p.add_argument(
        "--modules",
        action="store_true",
        help=(
            "a PyTorch program, unchanged: each module call an NVTX range (forward, backward), each"
            " optimizer.step() a step, for `report --by module`; ncu's NVTX support on"
        ),
    )
    p.add_argument(
        "--no-timing",
        action="store_true",
        help=(
            "with --modules: skip the timing run (the program once more without ncu, each step's"
            " wall time for MFU and GPU idle time per step)"
        ),
    )
    p.add_argument(
        "--timing-limit",
        type=_limit_seconds,
        metavar="SECONDS",
        help=(
            f"with --modules: stop the timing run after SECONDS (default {TIMING_LIMIT_S:g}); the"
            " ncu profile is kept either way"
        ),
    )
    p.add_argument(
        "--launch-skip", type=whole(0), metavar="N", help="kernel launches to skip first (N >= 0)"
    )
    p.add_argument(
        "--launch-count", type=whole(1), metavar="N", help="kernel launches to profile (N >= 1)"
    )
    p.add_argument(
        "--replay-mode",
        choices=REPLAY_MODES,
        help=(
            "ncu's: replay each kernel, the whole application, or an NVTX/profiler range (ncu's"
            " default: kernel)"
        ),
    )
    p.add_argument(
        "--clock-control",
        choices=("base", "none"),
        help="ncu's: lock the GPU clocks to base, or leave them as they are (ncu's default: base)",
    )
    p.add_argument(
        "--target-processes",
        choices=("all", "application-only"),
        help=(
            "ncu's: profile the program and its child processes, or the program only (ncu's"
            " default: all)"
        ),
    )
    p.add_argument(
        "--ncu-args", default="", metavar="ARGS", help="extra ncu arguments, as one string"
    )
    if not many_hosts:  # a sweep names its points SWEEP-param=value (--sweep-name)
        p.add_argument("--name", metavar="RUN", help="run name (default: time and program name)")
        p.add_argument(
            "--plan",
            action="store_true",
            help=(
                "print what the profile would collect and cost (metrics, "
                "ncu's passes per launch, launches) and the options that cut it; nothing runs"
            ),
        )
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings")
    what = "the analysis of every point" if many_hosts else "the final table"
    p.add_argument(
        "--no-tui", action="store_true", help=f"print progress and {what} instead of the app"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=(
            'print the analysis as one JSON object, {"analyses": [...]} (and "runs": how each'
            " profiled point went), instead of the app"
            if many_hosts
            else "print the final report as one JSON object (meta and rows) instead of the app"
        ),
    )


def _ssh_args(p: argparse.ArgumentParser, host_help: str, many: bool = False) -> None:
    """--host (repeatable with `many`), --ssh-config and --connect-timeout: every command that
    reaches a host."""
    if many:
        p.add_argument("--host", action="append", default=[], help=host_help)
    else:
        p.add_argument("--host", help=host_help)
    p.add_argument(
        "--ssh-config", metavar="FILE", help="an ssh config file to use instead of ~/.ssh/config"
    )
    p.add_argument(
        "--connect-timeout",
        type=whole(1),
        default=10,
        metavar="S",
        help="ssh connect timeout in seconds (default 10)",
    )


def whole(least: int, hint: str = ""):
    """An argparse type: a whole number >= `least` (ncu itself rejects a negative count only after
    the program has started; `--top 0` meant every row). `hint`: what to do instead, said with the
    refusal."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(
                f"{value} is below {least}: pass a whole number >= {least}"
                + (f" ({hint})" if hint else "")
            )
        return value

    return parse


def _runs_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list the runs in the store")
    p.add_argument("--sweep", help="only the runs of this sweep")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON list: id, name, sweep, params, host, GPU and totals of each run",
    )
    p.add_argument(
        "--no-tui", action="store_true", help="print the table instead of opening the app"
    )
    p = sub.add_parser("diff", help="compare two stored runs kernel group by kernel group")
    p.add_argument(
        "run_a", metavar="RUN_A", help="a stored run, by name or id (`flopscope runs` lists them)"
    )
    p.add_argument(
        "run_b", metavar="RUN_B", help="the run compared with RUN_A (time changes are B - A)"
    )
    p.add_argument(
        "--by",
        choices=["name", "nvtx", "module"],
        default="name",
        help=(
            "match kernel groups by kernel name, by NVTX range, or module tree nodes by path"
            " (default: name)"
        ),
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: both runs, their GPUs, a row per group",
    )
    p.add_argument(
        "--no-tui", action="store_true", help="print the table instead of opening the app"
    )
    p = sub.add_parser(
        "import",
        help=(
            "store a report file, or a run folder that was profiled but not stored (e.g. the disk"
            " was full)"
        ),
    )
    p.add_argument(
        "folder",
        metavar="PATH",
        help=(
            "a report file (.ncu-rep, compressed or not, or an ncu CSV), or the run folder"
            " `flopscope profile` printed (it holds report.ncu-rep)"
        ),
    )
    p.add_argument("--name", metavar="RUN", help="run name (default: the file's or folder's name)")
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings")
    sub.add_parser(
        "recover",
        help=(
            "copy the readable runs of a damaged run store into a new store in its place "
            "(the damaged file is kept beside it, renamed)"
        ),
    )


def _sweep_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="profile COMMAND for every parameter value (or analyse existing runs)",
        usage=(
            "flopscope sweep --param NAME=V1,V2 [options] -- COMMAND {NAME} ...\n"
            "       flopscope sweep --from RUN_OR_FILE ... [--param-from-name REGEX]"
        ),
    )
    add_profile_args(p, many_hosts=True)
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="values to sweep (repeat for a cartesian product); with --from: the parameter's name",
    )
    p.add_argument(
        "--sweep-name", metavar="NAME", help="name of the sweep in the store (default: from time)"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --sweep-name: skip points that sweep already stored",
    )
    p.add_argument(
        "--from",
        dest="sources",
        nargs="+",
        metavar="RUN_OR_FILE",
        help="analyse stored runs (name or id) or report files instead of profiling",
    )
    p.add_argument(
        "--param-from-name",
        metavar="REGEX",
        help=r"parameter value from file/run names, e.g. 'bs(\d+)'",
    )
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=0.05,
        help="allowed per-sample FLOP drift, a fraction (default 0.05)",
    )
    _slurm_args(p)


def _slurm_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--slurm",
        action="store_true",
        help=(
            "submit each point as a Slurm batch job (sbatch), here or on the login node --host;"
            " shows each job queued/running/done, Ctrl-C cancels them (scancel)"
        ),
    )
    p.add_argument("--partition", metavar="P", help="with --slurm: sbatch's --partition")
    p.add_argument("--gres", metavar="GRES", help="with --slurm: sbatch's --gres, e.g. gpu:1")
    p.add_argument(
        "--time", metavar="T", help="with --slurm: sbatch's --time, each point's limit, e.g. 30:00"
    )
    p.add_argument("--account", metavar="A", help="with --slurm: sbatch's --account")
    p.add_argument(
        "--sbatch-args",
        default="",
        metavar="ARGS",
        help=(
            "with --slurm: more sbatch options, as one string, e.g. '--qos=debug --constraint=h100'"
        ),
    )


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"{text}: a drift tolerance is a fraction >= 0, e.g. 0.05 for 5%"
        )
    return value


def _model_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "model", help="analytic FLOPs of a PyTorch model and predicted times (needs torch)"
    )
    _model_args(
        p,
        spec_help=(
            "module.path:NAME or path/to/file.py:NAME (NAME: a function returning an nn.Module, "
            f"or an nn.Module) or a built-in: {BUILTINS}"
        ),
    )
    p.add_argument(
        "--gpu",
        action="append",
        metavar="NAME",
        help=f"GPU to predict for, repeatable (default: {', '.join(DEFAULT_GPUS)})",
    )
    p.add_argument(
        "--ppp",
        type=float,
        default=0.5,
        help="platform percent of peak, PALEO's fraction of the peak reached (default 0.5)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=2,
        metavar="N",
        help="module table depth (default 2; JSON: all)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object")

    p = sub.add_parser(
        "reconcile", help="analytic FLOPs per module next to measured FLOPs per NVTX range"
    )
    p.add_argument("path", help="an .ncu-rep report or ncu CSV with NVTX ranges")
    _model_args(
        p,
        spec_help="as for `flopscope model`, or the JSON file `flopscope model --json` wrote",
        option=True,
    )
    p.add_argument("--gpu", metavar="NAME", help="GPU for the peak (default: the report's)")
    p.add_argument(
        "--tol", type=float, default=0.1, help="flag ratios outside 1 +- TOL (default 0.1)"
    )
    p.add_argument(
        "--steps", type=int, default=1, help="training steps the report holds (default 1)"
    )
    p.add_argument(
        "--step-time",
        type=_positive_seconds,
        metavar="SECONDS",
        help="measured wall time of one step",
    )
    p.add_argument(
        "--depth", type=int, metavar="N", help="module table depth (default: all; JSON: all)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument(
        "--no-tui", action="store_true", help="print the table instead of opening the app"
    )


def _model_args(p: argparse.ArgumentParser, spec_help: str, option: bool = False) -> None:
    if option:
        p.add_argument("--model", dest="spec", required=True, metavar="SPEC", help=spec_help)
    else:
        p.add_argument("spec", metavar="SPEC", help=spec_help)
    p.add_argument(
        "--input-shape",
        metavar="N,C,H,W",
        help="input tensor shape, batch first (built-ins have one)",
    )
    p.add_argument(
        "--input-dtype",
        choices=list(INPUT_DTYPES),
        metavar="DTYPE",
        help=(
            "input tensor dtype: int64 (alias long) for token ids (an nn.Embedding first), int32,"
            " float32, float16, bfloat16, float64 (default: the model parameters' dtype)"
        ),
    )
    p.add_argument("--train", action="store_true", help="count a training step: forward + backward")
    p.add_argument(
        "--dtype",
        choices=list(DTYPE_BYTES),
        help="precision for the peak and byte sizes (default: the model parameters' dtype)",
    )


def _limit_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 1 <= value <= 7 * 86400:
        raise argparse.ArgumentTypeError(f"{text} s: give a time limit from 1 s to 7 days")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"{text} s: a step takes a positive, finite time (e.g. 0.25)"
        )
    return value


def _check_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="fail (exit 1) when a run's kernel groups fall behind a baseline's (for CI)"
    )
    p.add_argument(
        "run", metavar="RUN", help="the run judged: a stored run (name or id) or a report file"
    )
    p.add_argument(
        "--baseline",
        metavar="RUN_OR_FILE",
        required=True,
        help="the pinned baseline: a stored run (name or id) or a report file",
    )
    p.add_argument(
        "--max-drop",
        metavar="PCT",
        default="5%",
        type=_fraction,
        help=(
            "largest tolerated change the wrong way, of the baseline's value: time per launch up, "
            "FLOP/s or %% of roof down (default 5%%)"
        ),
    )
    p.add_argument(
        "--min-share",
        metavar="PCT",
        default="1%",
        type=_fraction,
        help=(
            "groups under this share of the baseline's kernel time are listed, never judged"
            " (default 1%%)"
        ),
    )
    p.add_argument(
        "--by",
        choices=["name", "nvtx", "module"],
        default="name",
        help=(
            "match kernel groups by kernel name, by NVTX range, or module tree nodes by path, each"
            " node judged on its roll-up (default: name)"
        ),
    )
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings, for both runs")
    p.add_argument(
        "--allow-other-gpu",
        action="store_true",
        help=(
            "judge a run on other GPUs than the baseline's (refused otherwise, exit 2) on %% of"
            " roof alone"
        ),
    )
    _where_arg(
        p, "judge only the launches of both runs where EXPR holds (each launch's own values)"
    )
    p.add_argument(
        "--json", action="store_true", help="one JSON object: verdict, thresholds, a row per group"
    )


def _doctor_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help=(
            "check a host before profiling: ncu and its driver, GPUs, counter "
            "permission, container, writable folders, torch; each problem with its fix"
        ),
    )
    _ssh_args(p, "check HOST through the system ssh (its ~/.ssh/config applies)")
    p.add_argument(
        "--ncu", default="ncu", metavar="PATH", help="ncu on the target (default: ncu on PATH)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='one JSON object: {"host", "ok", "checks": [{"name", "status", "detail", "fix"}]}',
    )


def _ceilings_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ceilings",
        help=(
            "measure this node's DRAM, L2, FMA and GEMM ceilings with torch (a few "
            "seconds, clocks untouched) and store them per host, GPU and driver; --list shows them"
        ),
    )
    _ssh_args(p, "measure on HOST through the system ssh (its ~/.ssh/config applies)")
    p.add_argument(
        "--device", type=whole(0), default=0, metavar="N", help="CUDA device index (default 0)"
    )
    p.add_argument(
        "--list",
        action="store_true",
        help="show the stored measurements (of --host) instead of measuring",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help=(
            "one JSON list of measurements, each with its values, how "
            "they were measured and their fraction of the datasheet"
        ),
    )


def _serve_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help=(
            "the app in a browser, on localhost behind a one-time token (reach it from another"
            " machine with ssh -L)"
        ),
    )
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH|RUN",
        help=(
            "a report file, or the name or id of a stored run or sweep (default: the bundled"
            " example)"
        ),
    )
    p.add_argument(
        "--port",
        type=whole(1, "pick a port from 1 to 65535"),
        default=8000,
        help="TCP port to listen on (default: 8000)",
    )
    p.add_argument(
        "--host",
        metavar="ADDR",
        default="localhost",
        help=(
            "address to listen on (default: localhost; anything else serves plain HTTP to the"
            " network: prefer ssh -L)"
        ),
    )
    p.add_argument("--gpu", metavar="NAME", help="GPU for datasheet ceilings, as for `open`")


def _fraction(text: str) -> float:
    """`5%`, `5` (percent) or `0.05` as the fraction 0.05, for --max-drop and --min-share."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = math.nan
    fraction = value / 100 if text.strip().endswith("%") or value >= 1 else value
    if not 0 < fraction < 1:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 100% (e.g. 5%)")
    return fraction
