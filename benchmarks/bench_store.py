"""Run store speed: store and reload a run of 100k (and 1M) launches. Target (issue 6): 100k <= 1 s.

The run repeats the real launches of ../shared/fixtures/ncu/v100_ncar_miniweather_fp64_full.ncu-rep.

    python benchmarks/bench_store.py [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"
FIXTURE = FIXTURES / "v100_ncar_miniweather_fp64_full.ncu-rep"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["FLOPSCOPE_HOME"] = home
        from flopscope.core import Report, read_report
        from flopscope.core.store.run_store import Store

        base = read_report(FIXTURE)
        with Store() as store:
            print(
                f"{'launches':>10} {'store s':>8} {'reload s':>9} {'total s':>8} {'target':>7}"
                f" {'DB MB':>7}"
            )
            for n in args.sizes:
                kernels = pd.concat([base.kernels] * (n // len(base.kernels)), ignore_index=True)
                report = Report(meta=base.meta, kernels=kernels, gpu=base.gpu, missing=base.missing)
                start = time.perf_counter()
                store.save(report, f"run-{n}")
                stored = time.perf_counter()
                back = store.load(f"run-{n}")
                loaded = time.perf_counter()
                assert len(back.kernels) == len(kernels)
                size = sum(p.stat().st_size for p in Path(home).glob("flopscope.db*")) / 1e6
                target = "1 s" if n == 100_000 else ""
                print(
                    f"{n:>10} {stored - start:>8.2f} {loaded - stored:>9.2f} {loaded - start:>8.2f}"
                    f" {target:>7} {size:>7.1f}"
                )


if __name__ == "__main__":
    main()
