"""NVTX range paths as people group them: the arguments `torch.autograd.profiler.emit_nvtx` appends to every
range (`aten::linear, seq = 91, op_id = 786, sizes = [[128, 8, 512], ...], input_op_ids = [...]`) left out.

Those arguments number every call (`seq`, `op_id`) and record shapes (`sizes`), so no two ranges of a training
step read the same, and none of one run matches another's at a different batch size. One normaliser, used by
the kernel table's NVTX grouping, the diff and reconcile alike."""

from __future__ import annotations

import re

# From the first emit_nvtx argument up to the end of that range's name: argument values hold no `/` or `|`,
# which separate ranges in a path.
_EMIT_NVTX_ARGS = re.compile(r", (?:stashed seq|seq|op_id|sizes|input_op_ids) = [^/|]*")
_EMIT_NVTX_OP = re.compile(r", seq = \d+")  # a forward op's range (a backward one has `stashed seq`)


def normalize_nvtx(path: str) -> str:
    """`measure/forward/attn/aten::linear, seq = 91, op_id = 786, sizes = [[128, 8, 512]]/aten::mm, op_id = 9`
    -> `measure/forward/attn/aten::linear/aten::mm`; a path without emit_nvtx arguments is returned as it is."""
    return _EMIT_NVTX_ARGS.sub("", path) if ", " in path else path


def is_emit_nvtx_op(name: str) -> bool:
    """Whether a range name is an emit_nvtx operator range (it carries a `seq` number: a forward op's)."""
    return bool(_EMIT_NVTX_OP.search(name))
