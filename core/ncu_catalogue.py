"""Which counters the target's ncu offers on its GPU (`ncu --query-metrics --csv`), and the tensor op
counters to ask for among them.

Tensor counter names differ by chip and ncu version (ncu 2024.1: GA100 has `..._src_fp16_dst_fp32`, GH100
only the aggregate `..._src_fp16`; no chip has `..._src_fp64_dst_fp64`), and ncu refuses a whole profile for
one unknown name, so they are chosen from the catalogue rather than from a fixed list.
"""

from __future__ import annotations

import csv
import io
import re
from typing import TypeVar

_NAME = re.compile(r"^[a-z0-9]+__[a-z0-9_]+$")
# Totals by source type (and destination, where ncu splits it); sparsity halves and integer paths are left out.
# A source may name several types that share one counter (TU104: `src_fp16_bf16_tf32_dst_fp32`).
_FLOAT = r"(?:fp|bf|tf)[0-9]+"
_TENSOR_TOTAL = re.compile(rf"^sm__ops_path_tensor_src_({_FLOAT}(?:_{_FLOAT})*)(?:_dst_([a-z0-9]+))?$")


def query_argv(ncu: str) -> list[str]:
    return [ncu, "--query-metrics", "--csv"]


def parse_catalogue(text: str) -> set[str]:
    """Base metric names in `ncu --query-metrics` output, CSV (`--csv`) or the plain table. The CSV has a
    column per chip after the description ("1": the chip has it); with several GPUs, only metrics every
    one of them has count, since ncu refuses a profile for a name one GPU lacks."""
    names = set()
    for line in text.splitlines():
        cells = next(csv.reader(io.StringIO(line)), [""]) if line.startswith('"') else [line.split(" ", 1)[0]]
        if _NAME.match(cells[0]) and all(c == "1" for c in cells[4:]):
            names.add(cells[0])
    return names


def tensor_op_metrics(catalogue: set[str]) -> list[str]:
    """The fewest tensor op counters that cover every floating-point source type without overlap: the
    widest counter of each family (a source type's aggregate over its per-destination counters; a counter
    of several source types, `src_fp4_fp6_fp8_dst_fp32`, over those of fewer)."""
    paths = {name: (frozenset(m.group(1).split("_")), m.group(2))
             for name in catalogue if (m := _TENSOR_TOTAL.match(name))}
    return sorted(f"{name}.sum" for name in uncovered(by_accumulator(paths)))


K = TypeVar("K")
TensorPath = tuple[frozenset[str], "str | None"]  # a tensor counter's source types and destination (None: all)


def by_accumulator(paths: dict[K, TensorPath]) -> dict[K, TensorPath]:
    """Leave out a source type's all-destination total where its FP16- and FP32-destination counters are both
    there: an MMA accumulates in one or the other, so the pair holds the same ops, and it says which ran at
    the FP16-accumulate rate (twice the FP32-accumulate one on GeForce)."""
    destinations: dict[frozenset[str], set] = {}
    for types, dst in paths.values():
        destinations.setdefault(types, set()).add(dst)
    return {key: (types, dst) for key, (types, dst) in paths.items()
            if dst is not None or not {"fp16", "fp32"} <= destinations[types]}


def uncovered(paths: dict[K, TensorPath]) -> list[K]:
    """Keys whose counters share no op, so that summing them counts each op once: the widest first (more
    source types, then all destinations), then every narrower one that overlaps none of those kept."""
    def overlap(a: TensorPath, b: TensorPath) -> bool:
        return bool(a[0] & b[0]) and (a[1] is None or b[1] is None or a[1] == b[1])

    kept: list[K] = []
    for key in sorted(paths, key=lambda k: (-len(paths[k][0]), paths[k][1] is not None, str(k))):
        if not any(overlap(paths[key], paths[k]) for k in kept):
            kept.append(key)
    return kept
