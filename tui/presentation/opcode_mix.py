"""The Instruction mix panel's opcode lines: the launch's (a group's: all its launches') most
executed SASS opcodes, each with its warp instructions and their share of all as a bar, the rest
summed; read from the report on demand (core/readers/opcode_mix.py)."""

from __future__ import annotations

from . import format as fmt
from .kernel_sections import _share

TOP = 8  # opcodes shown; the others summed on one line


def opcode_items(counts: dict[str, int], top: int = TOP) -> list[tuple[str, str]]:
    """`Top opcodes` then one line per opcode, most executed first (ties by name), and `Other
    opcodes`; empty where the report has no count per opcode."""
    total = sum(counts.values())
    if not total:
        return []
    ranked = sorted(counts.items(), key=lambda oc: (-oc[1], oc[0]))
    shown, rest = ranked[:top], ranked[top:]
    out = [("Top opcodes", f"warp instructions, of the {fmt.integer(len(counts))} executed")]
    out += [(opcode, _share(count, total)) for opcode, count in shown]
    if rest:
        out.append((f"{len(rest)} other opcodes", _share(sum(c for _, c in rest), total)))
    return out
