"""The H100 training step's raw page with two nested NVTX ranges, `forward` holding `attn`, made
ONE range named `forward/attn` (as a program may push it): the launch's joined `nvtx` label reads
the same (`measure/forward/attn/...`), its ranges do not. And each launch's ranges read back from a
page with `csv` alone, as `--by nvtx` groups them (emit_nvtx's arguments cut off)."""

from __future__ import annotations

import csv
import gzip
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .nvtx_cells import page_stacks
from .two_gpu_capture import SOURCE

MERGED = "forward/attn"
_NESTED = (
    '"<default domain>:forward:none:none:none:none:none:none"  '
    '"<default domain>:attn:none:none:none:none:none:none"'
)
_ONE = f'"<default domain>:{MERGED}:none:none:none:none:none:none"'
# where emit_nvtx's arguments start in a range's name: the rest of the name is arguments
_ARGUMENTS = re.compile(r", (?:stashed seq|seq|op_id|sizes|input_op_ids) = ")


def merged_page(folder: Path, name: str, merge: Callable[[int], bool] = lambda n: True) -> Path:
    """The page with `forward` > `attn` one range `forward/attn` in the launches whose position on
    the page `merge` picks (every launch by default)."""
    with gzip.open(SOURCE, "rt", newline="") as f:
        rows = list(csv.reader(f))
    cell = next(k for k, h in enumerate(rows[0]) if "Push/Pop_Range" in h)
    merged = 0
    for n, row in enumerate(rows[2:]):
        if merge(n) and _NESTED in row[cell]:
            row[cell] = row[cell].replace(_NESTED, _ONE)
            merged += 1
    assert merged, "the page has no launch under forward > attn any more"
    path = folder / name
    with path.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return path


def source_page(folder: Path) -> Path:
    """The page as captured, uncompressed."""
    path = folder / "captured.csv"
    with gzip.open(SOURCE, "rt", newline="") as f:
        path.write_text(f.read(), newline="")
    return path


def grouped_stack(stack: dict[str, tuple[str, ...]]) -> tuple:
    """A launch's ranges (page_stacks') as `--by nvtx` groups them: per domain (sorted), each name
    up to emit_nvtx's arguments, names left empty dropped."""
    out = []
    for domain, names in sorted(stack.items()):
        cut = tuple(n for n in (_ARGUMENTS.split(name, maxsplit=1)[0] for name in names) if n)
        if cut:
            out.append((domain, cut))
    return tuple(out)


def page_groups(page: Path) -> Counter:
    """Launches per grouped stack of the page, read with `csv` alone."""
    return Counter(grouped_stack(s) for s in page_stacks(page).values())


def json_key(ranges: list[dict] | None) -> tuple:
    """A `--json` row's `nvtx_ranges` as `grouped_stack` spells a stack."""
    return tuple(sorted((d["domain"] or "", tuple(d["ranges"])) for d in ranges or []))


def joined(key: tuple) -> str:
    """A grouped stack as the joined label reads it (`a/b/c`, domains apart), where ranges and a
    `/` inside a name look alike."""
    return " | ".join((f"{d}:" if d else "") + "/".join(names) for d, names in key)
