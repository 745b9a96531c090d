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

_NAME = re.compile(r"^[a-z0-9]+__[a-z0-9_]+$")
# Totals by source type (and destination, where ncu splits it); sparsity halves and integer paths are left out.
# A source may name several types that share one counter (TU104: `src_fp16_bf16_tf32_dst_fp32`).
_FLOAT = r"(?:fp|bf|tf)[0-9]+"
_TENSOR_TOTAL = re.compile(rf"^sm__ops_path_tensor_src_({_FLOAT}(?:_{_FLOAT})*)(?:_dst_([a-z0-9]+))?$")


def query_argv(ncu: str) -> list[str]:
    return [ncu, "--query-metrics", "--csv"]


def parse_catalogue(text: str) -> set[str]:
    """Base metric names in `ncu --query-metrics` output, CSV (`--csv`) or the plain table."""
    names = set()
    for line in text.splitlines():
        first = next(csv.reader(io.StringIO(line)), [""])[0] if line.startswith('"') else line.split(" ", 1)[0]
        if _NAME.match(first):
            names.add(first)
    return names


def tensor_op_metrics(catalogue: set[str]) -> list[str]:
    """The fewest tensor op counters that cover every floating-point source type without overlap: a source
    type's aggregate where ncu has one, else its per-destination counters."""
    by_src: dict[str, list[tuple[str | None, str]]] = {}
    for name in catalogue:
        m = _TENSOR_TOTAL.match(name)
        if m:
            by_src.setdefault(m.group(1), []).append((m.group(2), name))
    chosen = []
    for entries in by_src.values():
        aggregate = [name for dst, name in entries if dst is None]
        chosen += aggregate or [name for _, name in entries]
    return sorted(f"{name}.sum" for name in chosen)
