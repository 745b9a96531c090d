"""Cutting names to a width so that different names still read differently (the app's table and the
CLI's).

C++ names of one library share long prefixes (`cutlass::Kernel<cutlass::gemm::kernel::B2bGemm<…>>`
and `…::Gemm<…>>`) and differ late: cut at the end, two kernels look like one. Names whose end-cuts
collide are cut in the middle instead, and where that still collides, around the place where they
differ."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from functools import cached_property
from itertools import pairwise

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "…"


def cut_end(text: str, width: int) -> str:
    """`text` in at most `width` cells, its end replaced by one ellipsis if it is longer. A name
    already ending its kept part in an ellipsis (the elided template arguments of `k<…>`) gets no
    second one."""
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
    """`text` cut to show the characters from `differs_at` on (where it parts from names that share
    its start), after a head of 1/`head_share` of the width: `cutlass::Ker…kernel::B2bGemm<…>>`."""
    if cell_len(text) <= width or width < 5:
        return cut_end(text, width)
    head = set_cell_size(text[:differs_at], max(1, width // head_share)).rstrip(ELLIPSIS)
    room = width - cell_len(head) - 1  # the window after the head's ellipsis
    # a little context before the difference
    start = max(len(head), differs_at - max(0, min(8, (room - 2) // 2)))
    if start <= len(head):
        return cut_end(text, width)
    return head + ELLIPSIS + cut_end(text[start:], room).lstrip(ELLIPSIS)


# A word: `aten::mm`, `autograd::engine::evaluate_function`, `mlp.0`, `batch_size=1024`,
# `Optimizer.step#SGD`.
_WORD = re.compile(r"[\w.#=+-]+(?:::[\w.#=+-]+)*")


def _signature(name: str) -> bool:
    """A C++ signature (`k<float>(int *)`): its words without their brackets read as noise."""
    return any(c in name for c in "<([")


class Words:
    """The words of a column's names, counted once (when first asked): how many names hold each, in
    the column and in a group."""

    def __init__(self, every: list[str]) -> None:
        self.every = every

    @cached_property
    def of(self) -> dict[str, frozenset[str]]:
        return {n: frozenset(_WORD.findall(n)) for n in self.every}

    @cached_property
    def common(self) -> Counter[str]:
        return Counter(w for words in self.of.values() for w in words)

    def group(self, names: Iterable[str]) -> tuple[Counter[str], int]:
        """How many names of `names` hold each word, and how many names there are."""
        names = list(names)
        return Counter(w for n in names for w in self.of[n]), len(names)


def cut_shared(
    text: str, width: int, group: tuple[Counter[str], int], words_of: Words
) -> str | None:
    """`text` in `width` cells with the words it shares with the other names of its `group`
    (`Words.group`: `text` among them) left out, each run of them one ellipsis, so that what stays
    is where it differs: the NVTX paths `autograd::engine::evaluate_function:
    ToCopyBackward0/ToCopyBackward0/aten::to/.../backward/mlp/ backward/mlp.0` and `.../attn` show
    as `…: ToCopyBackward0/…/mlp.0` and `…/attn`. A word repeated within the name goes first (it
    says nothing new), then the words every name of the group has, the most common in the column
    first, then the others alike; what still fits is taken back. None where only words no other name
    of the group has would be left out, and for C++ signatures (see cut_at_difference)."""
    if _signature(text):
        return None
    in_group, size = group
    spans = [m.span() for m in _WORD.finditer(text)]
    words = [text[a:b] for a, b in spans]
    shared = [in_group[w] - 1 for w in words]  # the other names of the group that hold it
    order = sorted(
        range(len(words)),
        key=lambda i: (
            words[i] in words[:i],
            shared[i] == size - 1,
            shared[i],
            words_of.common[words[i]],
            i > 0,
        ),
        reverse=True,
    )
    dropped: list[int] = []
    for i in order:
        if not shared[i] and words[i] not in words[:i]:
            return None  # only words of its own are left: cutting them would hide where it differs
        dropped.append(i)
        if _cells(_without(text, spans, set(dropped))) <= width:
            break
    else:
        return None
    # Then take back what still fits, the words dropped last first: dropping one at a time can leave
    # room.
    for i in reversed(dropped[:-1]):
        fewer = set(dropped) - {i}
        if _cells(_without(text, spans, fewer)) <= width:
            dropped.remove(i)
    return _without(text, spans, set(dropped))


def _cells(text: str) -> int:
    """cell_len, without its per-character walk where every character is one cell (ASCII and
    `…`)."""
    return len(text) if text.replace(ELLIPSIS, "").isascii() else cell_len(text)


def _without(text: str, spans: list[tuple[int, int]], dropped: set[int]) -> str:
    """`text` with the words at `dropped` (indexes into `spans`) left out, each run of them (and
    what stands between them) one ellipsis."""
    out, at, i = [], 0, 0
    while i < len(spans):
        if i not in dropped:
            i += 1
            continue
        first = i
        while i + 1 < len(spans) and i + 1 in dropped:
            i += 1
        out += [text[at : spans[first][0]], ELLIPSIS]
        at = spans[i][1]
        i += 1
    return "".join(out) + text[at:]


def distinct_cuts(names: Iterable[str], width: int) -> dict[str, str]:
    """How to show each name longer than `width` cells, so that names which differ still differ on
    screen (as far as `width` allows): cut at the end; where those cuts collide, with the words the
    colliding names share left out (`cut_shared`); where that cannot fit, in the middle; where those
    still collide, around the first character the colliding names do not share."""
    every = list(dict.fromkeys(names))
    cuts = {n: cut_end(n, width) for n in every if cell_len(n) > width}
    words, ordered = Words(every), sorted(every)
    parts, near = _parts_at(ordered), {}
    # cut just past where it parts from another (`cutlass::…::kernel::B2…`): cut there instead
    for name in cuts:
        if parts[name] + _PAST > width - 1:
            prefix = name[: parts[name]]
            if _signature(name):
                cuts[name] = cut_at_difference(name, width, len(prefix), 3)
                continue
            if prefix not in near:  # the names that share it: side by side in sorted order
                at = bisect_left(ordered, prefix)
                near[prefix] = words.group(
                    ordered[at : bisect_left(ordered, prefix + "\U0010ffff", at)]
                )
            cuts[name] = cut_shared(name, width, near[prefix], words) or cut_at_difference(
                name, width, len(prefix), 3
            )
    # first, keep the words where they differ and leave out the shared
    for group in _collisions(every, cuts):
        if all(_signature(n) for n in group):
            continue
        counted = words.group(group)
        for name in group:
            if name in cuts:
                cuts[name] = cut_shared(name, width, counted, words) or cuts[name]
    # groups split further
    at_difference = [lambda n, group: cut_at_difference(n, width, _shared(group))] * 3
    # A longer head where two groups' windows read alike (`at::nativ…CUDAFunctor_add<…>` of an
    # unrolled and of a vectorized kernel): `at::native::unroll…CUDAFunctor_add`.
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


# Characters an end cut must show past the place where a name parts from the one nearest to it:
# `…kernel::B2…` and `…kernel::Ge…` differ, but say nothing of the B2bGemm and the Gemm they are.
_PAST = 8


def _parts_at(ordered: list[str]) -> dict[str, int]:
    """Per name (`ordered`: sorted), how many leading characters it shares with the name nearest to
    it."""
    shared = [_shared([a, b]) for a, b in pairwise(ordered)]  # between neighbours
    return {n: max([*shared[max(i - 1, 0) : i + 1], 0]) for i, n in enumerate(ordered)}


def _number(every: list[str], cuts: dict[str, str], width: int) -> None:
    """The last resort where cuts still collide (names differing only in places `width` cannot show
    at once): each cut name of such a group ends in its own number, `…#2`, so no two rows read the
    same. Numbered across groups: two groups' heads can be alike once shortened to make room for the
    number."""
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
    # the sorted extremes share what every name between them shares
    first, last = min(group), max(group)
    return next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b),
        min(len(first), len(last)),
    )


def _collisions(names: list[str], cuts: dict[str, str]) -> list[list[str]]:
    """Groups of different names that would show the same text."""
    shown: dict[str, list[str]] = {}
    for name in names:
        shown.setdefault(cuts.get(name, name), []).append(name)
    return [group for group in shown.values() if len(group) > 1 and any(n in cuts for n in group)]
