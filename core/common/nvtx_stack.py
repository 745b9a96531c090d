"""A launch's NVTX stack as structured data: per domain, its open ranges outermost first, each name
exactly as ncu wrote it. The kernels table holds it in `nvtx_stack`, one text per launch in which
two control characters that no range name keeps (the readers replace them) separate the parts: a
category of distinct stacks, so a million launches hold a code each, and the table cache and run
store keep it as they keep any text column.

`nvtx` beside it is the same stack joined for people (`domain:range/range | range`), where a `/` or
`:` inside a name reads as a separator; the module tree and everything that splits ranges read
`nvtx_stack`."""

from __future__ import annotations

from collections.abc import Sequence

# between a domain's name and its ranges, and between ranges (ASCII unit separator)
RANGE_SEP = "\x1f"
DOMAIN_SEP = "\x1e"  # between domains (ASCII record separator)
# how ncu names the domain of ranges pushed without one
DEFAULT_DOMAINS = ("", "<default domain>", "<default>")
_REPLACEMENT = "\ufffd"

# ((domain, (outermost range, ..., innermost)), ...)
Stack = tuple[tuple[str, tuple[str, ...]], ...]


def clean_name(name: str) -> str:
    """A range or domain name with the two separators replaced (no NVTX name a program means holds
    them)."""
    if RANGE_SEP in name or DOMAIN_SEP in name:
        return name.replace(RANGE_SEP, _REPLACEMENT).replace(DOMAIN_SEP, _REPLACEMENT)
    return name


def encode_stack(domains: Sequence[tuple[str, Sequence[str]]]) -> str | None:
    """(domain, its ranges outermost first) per domain as the table's text; the default domain as
    ""; None without a range."""
    parts = [
        RANGE_SEP.join(
            [
                "" if domain in DEFAULT_DOMAINS else clean_name(domain),
                *(clean_name(r) for r in ranges),
            ]
        )
        for domain, ranges in domains
        if ranges
    ]
    return DOMAIN_SEP.join(parts) or None


def decode_stack(text: object) -> Stack:
    """The table's text back as ((domain, ranges), ...); () for a launch without ranges."""
    if not isinstance(text, str) or not text:
        return ()
    out = []
    for part in text.split(DOMAIN_SEP):
        domain, *ranges = part.split(RANGE_SEP)
        out.append((domain, tuple(ranges)))
    return tuple(out)


def stack_label(text: object) -> str | None:
    """The stack as people read it: `domain:range/range | range` (the default domain unnamed)."""
    parts = [(f"{d}:" if d else "") + "/".join(ranges) for d, ranges in decode_stack(text)]
    return " | ".join(parts) or None


def stack_path(text: object) -> str | None:
    """The stack as a path of whole range names, for a line of its own: `measure > forward > attn`
    (a `/` inside a name stays in it), a named domain first (`domain: a > b`), domains apart by
    ` | `; None where `text` is no stack (a group's "(mixed)")."""
    if not isinstance(text, str) or RANGE_SEP not in text:
        return None
    parts = [(f"{d}: " if d else "") + " > ".join(ranges) for d, ranges in decode_stack(text)]
    return " | ".join(parts) or None


def default_ranges(text: object) -> tuple[str, ...]:
    """The default domain's ranges; where no range is in the default domain but one domain holds
    them all, that domain's (a program that names its one domain)."""
    stack = decode_stack(text)
    default = [r for d, ranges in stack if d == "" for r in ranges]
    if default or len(stack) != 1:
        return tuple(default)
    return stack[0][1]


def stack_from_label(label: object) -> str | None:
    """A joined `nvtx` label (a run stored before `nvtx_stack`) read back as best it can be: `/` and
    ` | ` as separators, a leading `name:` (not `::`) as a domain."""
    if not isinstance(label, str) or not label:
        return None
    domains = []
    for part in label.split(" | "):
        head, colon, rest = part.partition(":")
        named = bool(colon) and "/" not in head and not rest.startswith(":")
        domains.append(
            (head if named else "", [r for r in (rest if named else part).split("/") if r])
        )
    return encode_stack(domains)
