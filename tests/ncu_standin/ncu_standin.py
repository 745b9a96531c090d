#!/usr/bin/env python3
"""Stands in for `ncu` in tests: checks its arguments like ncu, runs the program, replays captured
output.

See PROVENANCE.md beside this file for where every line it prints comes from. Standard library only,
plus `ncu_report` (optional) to read kernel names out of the report it copies.

Usage (as flopscope calls ncu):
  ncu_standin.py [--standin-report R] [--standin-scenario S] [--standin-delay SEC] [--standin-chip
  C]
                 [--standin-capture CONSOLE] --export STEM --force-overwrite (--metrics A,B | --set
                 full) [ncu filters] CMD ARGS...
  ncu_standin.py [--standin-...] --query-metrics --csv
  ncu_standin.py [--standin-...] --import REPORT --csv --page raw --print-units base

Like ncu, the program is the first argument that is not an option, and `--` is refused. `--import`
runs the real ncu named by $FLOPSCOPE_REAL_NCU (ncu imports reports without a GPU); without it the
stand-in refuses.

`--standin-capture CONSOLE` replays a run captured on a real GPU (tests/data/gpu/): CONSOLE's lines
verbatim (the program's own lines among them: the program itself is not run), the report R (.xz is
decompressed) written where --export says, and the `==PROF== Report:` line naming that path."""

from __future__ import annotations

import gzip
import lzma
import os
import re
import shutil
import subprocess
import sys
import time

KNOWN_OPTIONS_WITH_VALUE = {
    "--export",
    "-o",
    "--metrics",
    "--set",
    "--kernel-name",
    "-k",
    "--nvtx-include",
    "--launch-skip",
    "-s",
    "--launch-count",
    "-c",
    "--replay-mode",
    "--clock-control",
    "--target-processes",
    "--section",
}
KNOWN_FLAGS = {"--force-overwrite", "-f", "--nvtx"}
HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURED = os.path.join(HERE, "..", "data", "ncu_cli")
H100 = os.path.join(HERE, "..", "data", "gpu", "nvidia_h100_80gb_hbm3")  # ncu 2025.3.1 on an H100
METRIC_NAME = re.compile(r"^[a-z0-9]+__[a-z0-9_]+(\.[a-z0-9_]+)*$")
# `sys:1: UserWarning: ...`, as warnings.warn writes it
PYTHON_WARNING = re.compile(r"^\S+:\d+: \w*Warning: ")
# e.g. asked for on a GPU without FP8
NOT_ON_THIS_GPU = {"sm__ops_path_tensor_src_fp8_dst_fp32.sum"}


def fail(message: str, code: int = 1) -> None:
    print(f"==ERROR== {message}", flush=True)
    sys.exit(code)


def parse(argv: list[str]) -> tuple[dict, list[str]]:
    opts: dict = {"scenario": "ok", "delay": 0.0, "report": None, "chip": "gh100"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            replay("dashdash.stream.txt")
        if not arg.startswith("-"):
            return opts, argv[i:]
        if arg.startswith("--standin-"):
            opts[arg.removeprefix("--standin-")] = argv[i + 1]
            i += 2
        elif arg in KNOWN_OPTIONS_WITH_VALUE:
            opts[arg.lstrip("-")] = argv[i + 1]
            i += 2
        elif arg in KNOWN_FLAGS or arg in ("--query-metrics", "--csv"):
            opts[arg.lstrip("-")] = True
            i += 1
        else:
            fail(f"unrecognised option '{arg}'. Use --help for further details.")
    return opts, []


def replay(name: str) -> None:
    """Print a captured ncu console stream (its last line, `exit N`, is the exit code) and exit like
    ncu."""
    with open(os.path.join(CAPTURED, name)) as f:
        *lines, last = f.read().splitlines()
    print("\n".join(lines), flush=True)
    sys.exit(int(last.split()[1]))


def console_lines(path: str) -> tuple[list[str], int]:
    """A captured console and ncu's exit code: the `exit N` line capture.sh appends, else 0 (a run
    folder's ncu.log has none: flopscope keeps the code in run.json, and that run exited 0)."""
    with open(path) as f:
        lines = f.read().splitlines()
    if lines and re.fullmatch(r"exit -?\d+", lines[-1]):
        return lines[:-1], int(lines[-1].split()[1])
    return lines, 0


def replay_capture(console: str, report: str, stem: str | None, delay: float) -> None:
    """Replay a GPU capture line for line, each on the stream it came on: ncu 2025.3.1 on the H100,
    captured with stdout and stderr apart, wrote all its lines to stdout (stderr empty:
    .../console_split.txt), and the workloads print to stdout; Python's warnings module writes to
    stderr. Only the report's path changes: it is where --export says."""
    lines, code = console_lines(console)
    for line in lines:
        if line.startswith('==PROF== Profiling "'):
            time.sleep(delay)
        if line.startswith("==PROF== Report: "):
            if not stem:  # without --export ncu keeps no report and names none
                continue
            write_report(report, f"{stem}.ncu-rep")
            line = f"==PROF== Report: {os.path.abspath(stem)}.ncu-rep"
        print(line, file=sys.stderr if PYTHON_WARNING.match(line) else sys.stdout, flush=True)
    sys.exit(code)


def write_report(source: str, target: str) -> None:
    """The captured report where ncu would write it; the project keeps reports xz-compressed."""
    opener = lzma.open if source.endswith(".xz") else open
    with opener(source, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def refuse_missing_program(program: str) -> None:
    """ncu checks the program before it starts anything (captured: fail_no_app.stream.txt, ncu
    2025.3.1 on the H100; ncu 2024.1.1 prints the same line). A bare name is looked up on PATH, as
    ncu found `python3`."""
    if shutil.which(program):
        return
    lines, code = console_lines(os.path.join(H100, "fail_no_app.stream.txt"))
    print("\n".join(line.replace("./no_such_program", program) for line in lines), flush=True)
    sys.exit(code)


def query_metrics(opts: dict) -> None:
    if opts["scenario"] == "nocatalogue":
        replay("query_metrics_no_driver.stream.txt")
    with gzip.open(os.path.join(CAPTURED, f"query_metrics_csv_{opts['chip']}.csv.gz"), "rt") as f:
        sys.stdout.write(f.read())
    sys.exit(0)


def import_report(argv: list[str], scenario: str) -> None:
    if scenario == "ncu2022" and "--print-metric-instances" in argv:
        replay("instances_details_2022.3.stream.txt")
    real = os.environ.get("FLOPSCOPE_REAL_NCU")
    if not real:
        fail(
            "flopscope ncu stand-in: no real ncu to import with (set FLOPSCOPE_REAL_NCU; see"
            " PROVENANCE.md)",
            2,
        )
    os.execv(real, [real, *argv])


def kernel_names(report: str) -> list[str]:
    try:
        import ncu_report
    except ImportError:
        return ["kernel"]
    ctx = ncu_report.load_report(report)
    return [
        ctx.range_by_idx(r).action_by_idx(i).name()
        for r in range(ctx.num_ranges())
        for i in range(ctx.range_by_idx(r).num_actions())
    ]


_HELD = (
    "import os, sys; g = int(sys.argv[1]); os.read(g, 1); os.close(g);"
    " os.execvp(sys.argv[2], sys.argv[2:])"
)


def started_after_connected(command: list[str], exe: str) -> subprocess.Popen:
    """The program, held before its exec until `Connected` is printed: real ncu prints that line
    from inside the process before the program's own code runs, so the program's first output never
    comes before it."""
    gate, release = os.pipe()
    # waits for a byte on the gate, then becomes the program (the same pid)
    held = [sys.executable, "-c", _HELD, str(gate), *command]
    app = subprocess.Popen(held, pass_fds=(gate,))
    os.close(gate)
    print(f"==PROF== Connected to process {app.pid} ({exe})", flush=True)
    os.write(release, b"g")
    os.close(release)
    return app


def main(argv: list[str]) -> None:
    rest, standin = argv, {}
    while rest[:1] and rest[0].startswith("--standin-"):
        standin[rest[0].removeprefix("--standin-")] = rest[1]
        rest = rest[2:]
    if rest[:1] == ["--import"]:
        import_report(rest, standin.get("scenario", "ok"))
    opts, command = parse(argv)
    if opts.get("query-metrics"):
        query_metrics(opts)
    if not command:
        fail("No application was specified.")
    stem = opts.get("export") or opts.get("o")
    refuse_missing_program(command[0])
    if opts.get("capture"):
        replay_capture(opts["capture"], opts["report"], stem, float(opts["delay"]))
    for name in (opts.get("metrics") or "").split(","):
        if name and (not METRIC_NAME.match(name) or name in NOT_ON_THIS_GPU):
            base = re.escape(name.split(".")[0]) if "." in name else name
            fail(f"Failed to find metric regex:^{base}\\.(sum|min|max|avg|pct|ratio|max_rate)$")
    delay, scenario = float(opts["delay"]), opts["scenario"]
    exe = shutil.which(command[0]) or command[0]
    app = started_after_connected(command, exe)
    if scenario == "perm":
        print(
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU"
            " Performance Counters on the target device 0. For instructions on enabling permissions"
            " and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM",
            flush=True,
        )
        app.wait()
        print(f"==PROF== Disconnected from process {app.pid}", flush=True)
        sys.exit(1)
    if scenario == "driver":
        print("==ERROR== An error was reported by the counter measurement library:", flush=True)
        print(
            "==ERROR== Failed to initialize the profiler: LibraryNotLoaded. Check that a compatible"
            " driver library is loaded.",
            flush=True,
        )
        print("==PROF== Trying to shutdown target application", flush=True)
        app.kill()
        print("==ERROR== The application returned an error code (9).", flush=True)
        sys.exit(1)
    names = kernel_names(opts["report"])
    for index, name in enumerate(names):
        time.sleep(delay)
        shown = name if len(name) <= 30 else name[:27] + "..."
        print(f'==PROF== Profiling "{shown}" - {index}: 0%....50%....100% - 31 passes', flush=True)
    rc = app.wait()
    print(f"==PROF== Disconnected from process {app.pid}", flush=True)
    if stem:
        write_report(opts["report"], f"{stem}.ncu-rep")
    if rc != 0:
        print(f"==ERROR== The application returned an error code ({rc}).", flush=True)
    if stem:
        print(f"==PROF== Report: {os.path.abspath(stem)}.ncu-rep", flush=True)
    sys.exit(1 if rc != 0 else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
