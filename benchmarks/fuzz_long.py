"""The long fuzz run: many more damaged inputs than CI runs (tests/core/test_fuzz.py), each in a forked process so a
hang is killed and its peak memory is its own. Prints counts by exit code, command and mutation, the worst time
and memory, and every case that broke the rule (exit 0 with a sane table or exit 2 with one line naming the file).

    python benchmarks/fuzz_long.py [--cases 1000] [--seed 0] [--timeout 120]
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tests.helpers import fuzz_cases

BROKE, HUNG = 3, 4
KEPT = Path(tempfile.gettempdir()) / "flopscope-fuzz-kept"  # inputs of the cases that broke the rule, to replay


def _run_forked(case: fuzz_cases.Case, folder: Path, timeout: int, log: Path) -> tuple[int, float, float]:
    """(outcome: the CLI's exit code, BROKE or HUNG; seconds; peak RSS in MB) of one case in a child process."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: run, and say how it went in its exit status
        status = BROKE
        try:
            status = fuzz_cases.run(case, folder, limit_s=timeout)[0]
        except fuzz_cases.Hang:
            status = HUNG
        except BaseException:
            with log.open("a") as out:
                out.write(f"--- {case}\n{traceback.format_exc()[-4000:]}\n")
        os._exit(status)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)  # -N: killed by signal N (a crash in a native library)
    if code not in (0, 2):
        KEPT.mkdir(exist_ok=True)
        kept = KEPT / f"{time.time_ns()}-{case.source}-{case.kind}-{case.wrap}{case.path.suffix}"
        kept.write_bytes(case.path.read_bytes()) if case.path.is_file() else None
        with log.open("a") as out:
            out.write(f"--- outcome {_name(code)}: {case}, input kept as {kept}\n")
    return code, time.monotonic() - start, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=120, help="seconds one case may take")
    args = parser.parse_args()
    if not fuzz_cases.SOURCES:
        sys.exit("no fixtures: ../shared/fixtures/ncu is missing")
    counts: collections.Counter = collections.Counter()
    by: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    worst = {"time": (0.0, None), "memory": (0.0, None)}
    os.environ.setdefault("FLOPSCOPE_FIFO_WAIT", "0.3")
    with tempfile.TemporaryDirectory(prefix="flopscope-fuzz-") as tmp:
        log = Path(tmp) / "broken.txt"

        @seed(args.seed)
        @settings(
            max_examples=args.cases,
            deadline=None,
            database=None,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
        )
        @given(rng=st.randoms(use_true_random=True))
        def one(rng):
            folder = Path(tempfile.mkdtemp(dir=tmp))
            case = fuzz_cases.build(rng, folder)
            outcome, seconds, mb = _run_forked(case, folder, args.timeout, log)
            counts[outcome] += 1
            by[f"command {case.command}"][outcome] += 1
            by[f"mutation {case.kind}"][outcome] += 1
            by[f"wrapped {case.wrap}"][outcome] += 1
            if seconds > worst["time"][0]:
                worst["time"] = (seconds, case)
            if mb > worst["memory"][0]:
                worst["memory"] = (mb, case)
            for p in sorted(folder.rglob("*"), reverse=True):
                p.unlink() if not p.is_dir() else p.rmdir()
            folder.rmdir()

        start = time.monotonic()
        one()
        total = time.monotonic() - start
        broken = log.read_text() if log.exists() else ""
    n = sum(counts.values())
    print(f"cases: {n} in {total:.0f} s (seed {args.seed})")
    print("outcomes: " + ", ".join(f"{_name(k)} {v}" for k, v in sorted(counts.items())))
    print(f"{'':28} " + " ".join(f"{_name(k):>10}" for k in sorted(counts)))
    for key in sorted(by):
        print(f"{key:28} " + " ".join(f"{by[key][k]:>10}" for k in sorted(counts)))
    print(f"worst time: {worst['time'][0]:.1f} s ({_short(worst['time'][1])})")
    print(f"worst memory (peak RSS of one case's process): {worst['memory'][0]:.0f} MB ({_short(worst['memory'][1])})")
    print(f"parent peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if broken:
        print("\nbroken rule:\n" + broken)
    return 0 if set(counts) <= {0, 2} else 1


def _name(outcome: int) -> str:
    if outcome < 0:
        return f"signal {-outcome}"
    return {0: "exit 0", 2: "exit 2", BROKE: "BROKE", HUNG: "HUNG"}.get(outcome, f"exit {outcome}")


def _short(case) -> str:
    return "" if case is None else f"{case.source} {case.kind}/{case.wrap} via {case.command}"


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
