"""ncu's rule results of one launch, read on demand: how long the Kernel screen waits for its "ncu
rules".

    python benchmarks/bench_rule_results.py [--launches 1000 10000] [--repeat 5]

Builds each report from a real H100 capture (make_big_report.py: its result blocks repeated, as ncu
appends one block per launch; the default, bench_ncu_rep.py's, is of the roofline set: the time to
find a launch is the same with or without findings), then times, per file (medians):
  first / last   read_rule_results for launch 0 and for the last launch (the worst case: every block
  before it
                 is skipped), plain .ncu-rep and xz-compressed
  whole read     read_report of the whole file (the streaming reader; the table), for scale
"""

from __future__ import annotations

import argparse
import lzma
import statistics
import tempfile
import time
from pathlib import Path

from make_big_report import plain_copy, repeat_launches

REPO = Path(__file__).resolve().parents[1]
SOURCE = (
    REPO / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "train_transformer_bs8.ncu-rep.xz"
)


def _median(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    from flopscope.core import read_report
    from flopscope.core.report.rules import read_rule_results

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--source", type=Path, default=SOURCE)
    args = parser.parse_args()
    print(
        f"{'launches':>9} {'file':>6} {'MB':>8} {'first ms':>9} {'last ms':>9} {'whole read s':>13}"
    )
    with tempfile.TemporaryDirectory() as folder:
        source = plain_copy(args.source, Path(folder))
        for n in args.launches:
            plain = repeat_launches(source, Path(folder) / f"gemm_{n}.ncu-rep", launches=n)
            packed = plain.with_suffix(".ncu-rep.xz")
            packed.write_bytes(lzma.compress(plain.read_bytes(), preset=1))
            whole = _median(lambda p=plain: read_report(p), max(1, args.repeat // 2))
            for path in (plain, packed):
                assert not (read_rule_results(path, n - 1).reason or "").startswith("not read")
                first = _median(lambda p=path: read_rule_results(p, 0), args.repeat)
                last = _median(lambda p=path, k=n - 1: read_rule_results(p, k), args.repeat)
                kind = "xz" if path is packed else "plain"
                print(
                    f"{n:>9} {kind:>6} {path.stat().st_size / 1e6:>8.1f} {first * 1e3:>9.1f}"
                    f" {last * 1e3:>9.1f} {whole if path is plain else float('nan'):>13.2f}"
                )


if __name__ == "__main__":
    main()
