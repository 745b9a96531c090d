"""Which counters the target's ncu offers on its GPU (`ncu --query-metrics --csv`), and the tensor
op counters to ask for among them.

Tensor counter names differ by chip and ncu version (ncu 2024.1: GA100 has `..._src_fp16_dst_fp32`,
GH100 only the aggregate `..._src_fp16`; no chip has `..._src_fp64_dst_fp64`), and ncu refuses a
whole profile for one unknown name, so they are chosen from the catalogue rather than from a fixed
list."""

from __future__ import annotations

import csv
import io
import re
from typing import TypeVar

_NAME = re.compile(r"^[a-z0-9]+__[a-z0-9_]+$")
# Totals by source type (and destination, where ncu splits it); sparsity halves and integer paths
# are left out. A source may name several types that share one counter (TU104:
# `src_fp16_bf16_tf32_dst_fp32`).
_FLOAT = r"(?:fp|bf|tf)[0-9]+"
_TENSOR_TOTAL = re.compile(
    rf"^sm__ops_path_tensor_src_({_FLOAT}(?:_{_FLOAT})*)(?:_dst_([a-z0-9]+))?$"
)


def query_argv(ncu: str) -> list[str]:
    return [ncu, "--query-metrics", "--csv"]


def parse_catalogue(text: str) -> set[str]:
    """Base metric names in `ncu --query-metrics` output, CSV (`--csv`) or the plain table. The CSV
    has a column per chip after the description ("1": the chip has it); with several GPUs, only
    metrics every one of them has count, since ncu refuses a profile for a name one GPU lacks."""
    names = set()
    for line in text.splitlines():
        cells = (
            next(csv.reader(io.StringIO(line)), [""])
            if line.startswith('"')
            else [line.split(" ", 1)[0]]
        )
        if _NAME.match(cells[0]) and all(c == "1" for c in cells[4:]):
            names.add(cells[0])
    return names


def tensor_op_metrics(catalogue: set[str]) -> list[str]:
    """The fewest tensor op counters that cover every floating-point source type without overlap:
    the widest counter of each family (a source type's aggregate over its per-destination counters;
    a counter of several source types, `src_fp4_fp6_fp8_dst_fp32`, over those of fewer)."""
    paths = {
        name: (frozenset(m.group(1).split("_")), m.group(2))
        for name in catalogue
        if (m := _TENSOR_TOTAL.match(name))
    }
    return sorted(f"{name}.sum" for name in uncovered(by_accumulator(paths)))


K = TypeVar("K")
# a tensor counter's source types and destination (None: all)
TensorPath = tuple[frozenset[str], "str | None"]


def by_accumulator(paths: dict[K, TensorPath]) -> dict[K, TensorPath]:
    """Leave out a source type's all-destination total where its FP16- and FP32-destination counters
    are both there: an MMA accumulates in one or the other, so the pair holds the same ops, and it
    says which ran at the FP16-accumulate rate (twice the FP32-accumulate one on GeForce)."""
    destinations: dict[frozenset[str], set[str | None]] = {}
    for types, dst in paths.values():
        destinations.setdefault(types, set()).add(dst)
    return {
        key: (types, dst)
        for key, (types, dst) in paths.items()
        if dst is not None or not {"fp16", "fp32"} <= destinations[types]
    }


def uncovered(paths: dict[K, TensorPath]) -> list[K]:
    """Keys whose counters share no op, so that summing them counts each op once: the widest first
    (more source types, then all destinations), then every narrower one that overlaps none of those
    kept."""

    def overlap(a: TensorPath, b: TensorPath) -> bool:
        return bool(a[0] & b[0]) and (a[1] is None or b[1] is None or a[1] == b[1])

    kept: list[K] = []
    for key in sorted(paths, key=lambda k: (-len(paths[k][0]), paths[k][1] is not None, str(k))):
        if not any(overlap(paths[key], paths[k]) for k in kept):
            kept.append(key)
    return kept


# What `tensor_op_metrics` picks from ncu 2024.1's own catalogue of each chip (tests/data/ncu_cli,
# checked by tests/core/test_ncu_catalogue.py): the counters to name when a report lacks tensor
# FLOPs, by compute capability. Chips ncu 2024.1 does not know (Blackwell) are left out: their names
# are asked of the target's ncu.
TENSOR_COUNTERS_BY_CC = {
    "7.0": [
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    ],
    "7.5": [
        "sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
    ],
    "8.0": [
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    ],
    "8.6": [
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    ],
    "8.9": [
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_fp8.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    ],
    "9.0": [
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16.sum",
        "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_fp8.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    ],
}
# Where the chip is unknown: what to ask the target's ncu (named, not run: it is only advice).
ASK_FOR_TENSOR_COUNTERS = "sm__ops_path_tensor_src_<type>.sum"
WHICH_TENSOR_COUNTERS = (
    "`ncu --query-metrics | grep ops_path_tensor_src` lists the <type>s this GPU has"
)


def tensor_counters_for(ccs: list[str]) -> list[str]:
    """The tensor op counters to collect on GPUs of these compute capabilities: only names every one
    of them has, since ncu refuses a whole profile for one it lacks."""
    looked_up = [TENSOR_COUNTERS_BY_CC.get(_cc(c)) for c in ccs]
    known = [k for k in looked_up if k is not None]
    if not known or len(known) < len(looked_up):
        return [ASK_FOR_TENSOR_COUNTERS]
    return [m for m in known[0] if all(m in k for k in known[1:])] or [ASK_FOR_TENSOR_COUNTERS]


def _cc(value: str) -> str:
    try:
        return f"{float(value):.1f}"
    except ValueError:
        return str(value)
