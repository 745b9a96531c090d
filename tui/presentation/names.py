"""Cutting names to a width so that different names still read differently (the app's table and the CLI's).

C++ names of one library share long prefixes (`cutlass::Kernel<cutlass::gemm::kernel::B2bGemm<…>>` and
`…::Gemm<…>>`) and differ late: cut at the end, two kernels look like one. Names whose end-cuts collide are
cut in the middle instead, and where that still collides, around the place where they differ.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "…"


def cut_end(text: str, width: int) -> str:
    """`text` in at most `width` cells, its end replaced by one ellipsis if it is longer. A name already
    ending its kept part in an ellipsis (the elided template arguments of `k<…>`) gets no second one."""
    if cell_len(text) <= width:
        return text
    if width < 2:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1).rstrip(ELLIPSIS) + ELLIPSIS


def _tail(text: str, width: int) -> str:
    """The end of `text` in at most `width` cells."""
    out = ""
    for ch in reversed(text):
        if cell_len(ch + out) > width:
            break
        out = ch + out
    return out


def cut_middle(text: str, width: int) -> str:
    """Head and tail of `text` around one ellipsis, in at most `width` cells."""
    if cell_len(text) <= width or width < 3:
        return cut_end(text, width)
    head = set_cell_size(text, (width - 1) // 2).rstrip(ELLIPSIS)
    tail = _tail(text, width - 1 - cell_len(head)).lstrip(ELLIPSIS)
    return head + ELLIPSIS + tail


def cut_at_difference(text: str, width: int, differs_at: int, head_share: int = 4) -> str:
    """`text` cut to show the characters from `differs_at` on (where it parts from names that share its start),
    after a head of 1/`head_share` of the width: `cutlass::Ker…kernel::B2bGemm<…>>`."""
    if cell_len(text) <= width or width < 5:
        return cut_end(text, width)
    head = set_cell_size(text[:differs_at], max(1, width // head_share)).rstrip(ELLIPSIS)
    room = width - cell_len(head) - 1  # the window after the head's ellipsis
    start = max(len(head), differs_at - max(0, min(8, (room - 2) // 2)))  # a little context before the difference
    if start <= len(head):
        return cut_end(text, width)
    return head + ELLIPSIS + cut_end(text[start:], room).lstrip(ELLIPSIS)


def distinct_cuts(names: Iterable[str], width: int) -> dict[str, str]:
    """How to show each name longer than `width` cells, so that names which differ still differ on screen
    (as far as `width` allows): cut at the end; where those cuts collide, in the middle; where those still
    collide, around the first character the colliding names do not share."""
    every = list(dict.fromkeys(names))
    cuts = {n: cut_end(n, width) for n in every if cell_len(n) > width}
    at_difference = [lambda n, group: cut_at_difference(n, width, _shared(group))] * 3  # groups split further
    # A longer head where two groups' windows read alike (`at::nativ…CUDAFunctor_add<…>` of an unrolled and of a
    # vectorized kernel): `at::native::unroll…CUDAFunctor_add`.
    longer_head = [lambda n, group: cut_at_difference(n, width, _shared(group), head_share=2)] * 2
    for recut in (lambda n, _: cut_middle(n, width), *at_difference, *longer_head):
        groups = _collisions(every, cuts)
        if not groups:
            return cuts
        for group in groups:
            for name in group:
                if name in cuts:
                    cuts[name] = recut(name, group)
    _number(every, cuts, width)
    return cuts


def _number(every: list[str], cuts: dict[str, str], width: int) -> None:
    """The last resort where cuts still collide (names differing only in places `width` cannot show at once):
    each cut name of such a group ends in its own number, `…#2`, so no two rows read the same. Numbered across
    groups: two groups' heads can be alike once shortened to make room for the number."""
    numbered = [n for group in _collisions(every, cuts) for n in group if n in cuts]
    for i, name in enumerate(numbered, start=1):
        mark = f"#{i}"
        cuts[name] = (
            cut_end(name, width - len(mark)).rstrip(ELLIPSIS) + ELLIPSIS + mark
            if width > len(mark) + 1
            else mark[-width:]
        )


def _shared(group: list[str]) -> int:
    """How many leading characters all names of `group` share."""
    first, last = min(group), max(group)  # the sorted extremes share what every name between them shares
    return next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))


def _collisions(names: list[str], cuts: dict[str, str]) -> list[list[str]]:
    """Groups of different names that would show the same text."""
    shown: dict[str, list[str]] = {}
    for name in names:
        shown.setdefault(cuts.get(name, name), []).append(name)
    return [group for group in shown.values() if len(group) > 1 and any(n in cuts for n in group)]
