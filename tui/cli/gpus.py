"""`flopscope gpus`: the GPU datasheet database. Light on purpose (no pandas): it answers in a
fraction of a second, like `--version`."""

from __future__ import annotations

import json
import math
import sys

from rich.text import Text

from ...core.common import Gpu, all_gpus
from ..presentation import format as fmt
from ..presentation.tables import Spec, console, fitted_table, print_hidden


def cmd_gpus(args) -> int:
    gpus = all_gpus()
    if args.json:
        json.dump([_gpu_record(g) for g in gpus], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rows = [
        [
            g.name,
            g.key,
            g.compute_capability,
            str(g.sms or ""),
            *(
                fmt.si(g.peak(c), "FLOP/s")
                for c in ("fp64", "fp32", "tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8")
            ),
            fmt.si(g.dram_bytes_per_s, "B/s"),
            g.source,
        ]
        for g in gpus
    ]
    out = console()
    # A narrow terminal loses whole columns, least used first, never digits of a number.
    table, hidden = fitted_table(
        _GPU_COLUMNS, rows, out.width, flex=len(_GPU_COLUMNS) - 1, flex_min=30, distinct=False
    )  # links cut at the end
    out.print(table)
    print_hidden(out, hidden)
    out.print(
        Text(
            "Tensor peaks are dense with FP32 accumulate (FP16-accumulate rates: --json); per"
            " device as CUDA sees it (a K80 board is 2 devices)."
        )
    )
    return 0


# Priorities: what drops first on a narrow terminal (higher first); Name, Key (what --gpu takes and
# error messages suggest) and FP32 always stay.
_GPU_COLUMNS = [
    Spec(title, numeric=title not in ("Name", "Key", "Source"), priority=p)
    for title, p in (
        ("Name", 0),
        ("Key", 0),
        ("CC", 7),
        ("SMs", 8),
        ("FP64", 5),
        ("FP32", 0),
        ("TF32 TC", 4),
        ("FP16 TC", 1),
        ("BF16 TC", 2),
        ("FP8 TC", 6),
        ("DRAM", 3),
        ("Source", 9),
    )
]


def _gpu_record(g: Gpu) -> dict:
    """One GPU as JSON: unknown figures (NaN) as null, as every JSON flopscope writes says them."""
    record = {
        "key": g.key,
        "names": list(g.names),
        "arch": g.arch,
        "compute_capability": g.compute_capability,
        # sms as a float: what this JSON has always said (it came from a pandas column holding NaN)
        "sms": None if g.sms is None else float(g.sms),
        "boost_clock_hz": g.boost_clock_hz,
        "tensor_clock_hz": g.tensor_clock_hz,
        **{f"peak_{k}_flop_per_s": v for k, v in g.peaks.items()},
        "dram_bytes_per_s": g.dram_bytes_per_s,
        "l2_bytes": g.l2_bytes,
        "memory_bytes": g.memory_bytes,
        "notes": g.notes,
        "source": g.source,
    }
    return {
        k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in record.items()
    }
