"""NVTX range paths as people group them: the arguments `torch.autograd.profiler.emit_nvtx` appends
to every range (`aten::linear, seq = 91, op_id = 786, sizes = [[128, 8, 512], ...], input_op_ids =
[...]`) left out.

Those arguments number every call (`seq`, `op_id`) and record shapes (`sizes`), so no two ranges of
a training step read the same, and none of one run matches another's at a different batch size. One
normaliser, used by the kernel table's NVTX grouping, the diff and reconcile alike."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..common.nvtx_stack import (
    decode_stack,
    encode_stack,
    stack_from_label,
    stack_label,
    stack_path,
)

# From the first emit_nvtx argument up to the end of that range's name: argument values hold no `/`
# or `|`, which separate ranges in a path.
_EMIT_NVTX_ARGS = re.compile(r", (?:stashed seq|seq|op_id|sizes|input_op_ids) = [^/|]*")
# where emit_nvtx's arguments start in one range's name
_EMIT_NVTX_ARG = re.compile(r", (?:stashed seq|seq|op_id|sizes|input_op_ids) = ")
# a forward op's range (a backward one has `stashed seq`)
_EMIT_NVTX_OP = re.compile(r", seq = \d+")


def normalize_nvtx(path: str) -> str:
    """`measure/forward/attn/aten::linear, seq = 91, op_id = 786, sizes = [[128, 8, 512]]/aten::mm,
    op_id = 9` -> `measure/forward/attn/aten::linear/aten::mm`; a path without emit_nvtx arguments
    is returned as it is."""
    return _EMIT_NVTX_ARGS.sub("", path) if ", " in path else path


def normalize_range(name: str) -> str:
    """One range's name without emit_nvtx's arguments: `aten::linear, seq = 91, op_id = 786` ->
    `aten::linear`; the whole rest of the name is arguments, whatever it holds (`/`)."""
    found = _EMIT_NVTX_ARG.search(name) if ", " in name else None
    return name[: found.start()] if found else name


def grouping_stack(text: object) -> str:
    """A launch's NVTX stack (`nvtx_stack`'s text) as `--by nvtx` groups it: each range's name
    without emit_nvtx's arguments, ranges and domains kept apart; "" without a range."""
    return (
        encode_stack(
            [
                (d, [n for n in map(normalize_range, ranges) if n])
                for d, ranges in decode_stack(text)
            ]
        )
        or ""
    )


def stack_groups(kernels: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each launch's number among the distinct stacks `--by nvtx` groups by (`grouping_stack`), in
    the order they first appear, and those stacks ("" for the launches without a range). Made once
    per distinct stack, not per launch."""
    codes, uniques = pd.factorize(stacks_of(kernels), sort=False, use_na_sentinel=True)
    grouped = [grouping_stack(u) for u in np.asarray(uniques, dtype=object)] + [""]
    merged, distinct = pd.factorize(np.array(grouped, dtype=object), sort=False)
    # numbered again over the launches: only stacks some launch has, in launch order
    numbers, used = pd.factorize(merged[codes], sort=False)
    return numbers, [str(distinct[u]) for u in used]


def ranges_list(text: object) -> list[dict[str, object]] | None:
    """A stack as `--json` writes it: per domain, `{"domain": name (None for the default one),
    "ranges": [outermost, ..., innermost]}`, each name whole; None without a range."""
    return [
        {"domain": d or None, "ranges": list(ranges)} for d, ranges in decode_stack(text)
    ] or None


def readable_labels(stacks: list[str], no_range: str) -> list[str]:
    """Each grouped stack (`nvtx_stack`'s text, "" for the launches without a range) as a row's
    name: its `nvtx` label (`a/b/c`), or, where another of `stacks` has the same label (a range
    named `a/b` beside a range `a` holding `b`), its ranges whole joined with ` > ` (`a/b > c`,
    `a > b > c`), so two rows never read alike."""
    labels = [stack_label(s) or no_range for s in stacks]
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    return [
        (stack_path(s) or label) if seen[label] > 1 else label
        for s, label in zip(stacks, labels, strict=True)
    ]


def is_emit_nvtx_op(name: str) -> bool:
    """Whether a range name is an emit_nvtx operator range (it carries a `seq` number: a forward
    op's)."""
    return bool(_EMIT_NVTX_OP.search(name))


def stack_columns(stacks: pd.Series) -> tuple[pd.Categorical, pd.Series]:
    """The readers' NVTX column (each launch's structured stack, `core/common/nvtx_stack.py`) as the
    table's `nvtx_stack` (a category per distinct stack: a code per launch) and its joined `nvtx`
    label, each label made once per distinct stack."""
    codes, uniques = pd.factorize(stacks, sort=False, use_na_sentinel=True)
    texts = [u if isinstance(u, str) and u else None for u in np.asarray(uniques, dtype=object)]
    distinct = pd.Index([t for t in dict.fromkeys(texts) if t is not None], dtype=object)
    at = np.array([distinct.get_loc(t) if t is not None else -1 for t in texts], dtype=np.int64)
    stack = pd.Categorical.from_codes(
        at[codes] if len(at) else np.full(len(codes), -1), categories=distinct
    )
    labels = np.array([stack_label(t) for t in distinct] + [None], dtype=object)
    chosen = np.where(codes < 0, -1, at[codes] if len(at) else -1)
    return stack, pd.Series(labels[chosen], index=stacks.index, dtype=object)


def stacks_of(kernels: pd.DataFrame) -> pd.Series:
    """Each launch's structured NVTX stack: `nvtx_stack`, or for a table stored without it (a run
    saved before it) read back from the joined `nvtx` labels, as best they can be split."""
    if "nvtx_stack" in kernels:
        return kernels["nvtx_stack"]
    codes, labels = pd.factorize(kernels["nvtx"], sort=False, use_na_sentinel=True)
    texts = np.array([stack_from_label(t) for t in labels] + [None], dtype=object)
    return pd.Series(texts[codes], index=kernels.index, dtype=object)
