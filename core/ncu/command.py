"""The ncu command line for a profile: the smallest metric set that answers the question, as an argv
list."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files

from ..common.errors import FlopscopeError
from .metrics import METRIC_SETS

REPLAY_MODES = ("kernel", "application", "range")
# --modules' timing run (the program once more, without ncu) is stopped after this many seconds: a
# program that waits on input or never ends would hold the profile, whose report is already back.
TIMING_LIMIT_S = 600.0

# ncu options flopscope passes on every profile, or whose output it must see, with what to use
# instead: given again in --ncu-args, ncu writes the report elsewhere, refuses the option twice or
# prints nothing flopscope reads.
_PRINTED = "flopscope prints the report itself (`--json`; `flopscope export` writes CSV)"
ALWAYS_SET = {
    ("--export", "-o"): "the report goes to the run folder, named by --name RUN",
    ("--force-overwrite", "-f"): "each run gets a run folder of its own (--name RUN)",
    ("--metrics", None): "flopscope's --metrics roofline|flops|memory|full|NAME,...",
    ("--set", None): "flopscope's --metrics full (ncu's full set) or --metrics NAME,...",
    (
        "--log-file",
        None,
    ): "flopscope reads ncu's console output and keeps it in the run folder's ncu.log",
    ("--import", "-i"): "`flopscope open FILE` reads a report made before",
    ("--csv", None): _PRINTED,
    ("--page", None): _PRINTED,
    ("--print-summary", None): _PRINTED,
}
# ncu options flopscope has its own option for: refused in --ncu-args only when that option is given
# too.
OWN_OPTION = {
    ("--kernel-name", "-k"): "kernel_name",
    ("--launch-skip", "-s"): "launch_skip",
    ("--launch-count", "-c"): "launch_count",
    ("--nvtx-include", None): "nvtx_include",
    ("--replay-mode", None): "replay_mode",
    ("--clock-control", None): "clock_control",
    ("--target-processes", None): "target_processes",
}


@dataclass
class ProfileOptions:
    command: list[str]
    metrics: str = "roofline"  # a set name, "full", or comma-separated metric names
    kernel_name: str | None = None
    nvtx_include: list[str] = field(default_factory=list)
    launch_skip: int | None = None
    launch_count: int | None = None
    replay_mode: str | None = None
    clock_control: str | None = None
    target_processes: str | None = None
    ncu_args: list[str] = field(default_factory=list)
    ncu: str = "ncu"
    compute_capability: str | None = None  # of the target GPU, when known
    # tensor op counters the target's ncu offers; None: ask it
    tensor_metrics: list[str] | None = None
    # NVTX ranges per PyTorch module (core/profiling/module_ranges.py): ncu records them
    modules: bool = False
    # with modules: the program once more without ncu, its steps timed (timing_run.py)
    timing: bool = True
    timing_limit_s: float = TIMING_LIMIT_S  # the timing run stopped after it


def metric_list(opts: ProfileOptions) -> list[str] | None:
    """The metrics to collect; None for `full` (ncu's own full section set)."""
    if opts.metrics == "full":
        return None
    if opts.metrics in METRIC_SETS:
        names = list(METRIC_SETS[opts.metrics])
        return names + (opts.tensor_metrics or []) if opts.metrics != "memory" else names
    names = [m.strip() for m in opts.metrics.split(",") if m.strip()]
    if not names:
        raise FlopscopeError(
            "--metrics", "no metric names given", "use roofline, flops, memory, full or NAME,..."
        )
    return names


def ncu_argv(opts: ProfileOptions, report_stem: str) -> list[str]:
    """ncu's argument list; the user's command follows ncu's options untouched, one argv element per
    argument.

    ncu takes no `--` (it reads it as an ambiguous option and exits), so the program must not look
    like an option either."""
    if not opts.command:
        raise FlopscopeError(
            "profile",
            "no command to profile",
            "put it after `--`: flopscope profile -- python x.py",
        )
    if opts.command[0].startswith("-"):
        raise FlopscopeError(
            "profile",
            f"the command starts with {opts.command[0]!r}, which ncu would read as its own option",
            "name the program first: flopscope profile -- ./app ARGS",
        )
    check_ncu_args(opts)
    argv = [opts.ncu, "--export", report_stem, "--force-overwrite"]
    metrics = metric_list(opts)
    argv += ["--set", "full"] if metrics is None else ["--metrics", ",".join(metrics)]
    if opts.kernel_name:
        argv += ["--kernel-name", opts.kernel_name]
    for nvtx in opts.nvtx_include:
        argv += ["--nvtx", "--nvtx-include", nvtx]
    if opts.modules and not opts.nvtx_include:
        argv += ["--nvtx"]
    if opts.launch_skip is not None:
        argv += ["--launch-skip", str(opts.launch_skip)]
    if opts.launch_count is not None:
        argv += ["--launch-count", str(opts.launch_count)]
    if opts.replay_mode:
        if opts.replay_mode not in REPLAY_MODES:
            raise FlopscopeError(
                "--replay-mode",
                f"unknown mode {opts.replay_mode!r}",
                "use kernel, application or range",
            )
        argv += ["--replay-mode", opts.replay_mode]
    if opts.clock_control:
        argv += ["--clock-control", opts.clock_control]
    if opts.target_processes:
        argv += ["--target-processes", opts.target_processes]
    return [*argv, *opts.ncu_args, *opts.command]


def check_ncu_args(opts: ProfileOptions) -> None:
    """Refuse an --ncu-args option that flopscope sets itself (ALWAYS_SET, or OWN_OPTION when its
    flopscope option is given too): one line naming it and flopscope's way, before anything runs."""
    for token in opts.ncu_args:
        for (long, short), instead in ALWAYS_SET.items():
            if _is_option(token, long, short):
                raise FlopscopeError(
                    f"--ncu-args {token}",
                    f"flopscope sets ncu's {long} itself",
                    f"leave it out: {instead}",
                )
        for (long, short), field_name in OWN_OPTION.items():
            if _is_option(token, long, short) and getattr(opts, field_name) not in (None, []):
                raise FlopscopeError(
                    f"--ncu-args {token}",
                    f"flopscope's {long} is given too, and flopscope passes it to ncu",
                    f"pass it once, as flopscope's {long}",
                )


def _is_option(token: str, long: str, short: str | None) -> bool:
    """`--export x`, `--export=x`, `--expo x`, `-o x`, `-ox`: ncu's (boost's) spellings of one
    option."""
    if token.startswith("--"):
        return resolve_long(token.split("=", 1)[0]) == long
    return short is not None and token.startswith(short)


def resolve_long(name: str) -> str:
    """The long option ncu reads `name` as: itself where ncu has it (`--nvtx`), else the one option
    it begins (ncu takes `--expo` for `--export`); unchanged where it begins none or several (ncu
    refuses those)."""
    options = _ncu_options()
    if name in options:
        return name
    starting = [o for o in options if o.startswith(name)]
    return starting[0] if len(starting) == 1 else name


@cache
def _ncu_options() -> frozenset[str]:
    text = (files("flopscope.core") / "data" / "ncu_options.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line.startswith("--"))


def import_raw_argv(ncu: str, report: str, instances: bool = True) -> list[str]:
    """ncu re-reading a report to print its raw CSV page: every metric, base units, and
    (`instances`) the per-instance values (per-opcode instruction counts) that the page otherwise
    sums away. ncu 2022.3 and older have no `--print-metric-instances details`."""
    argv = [ncu, "--import", report, "--csv", "--page", "raw", "--print-units", "base"]
    return [*argv, "--print-metric-instances", "details"] if instances else argv
