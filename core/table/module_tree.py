"""A model's module tree from the launches' NVTX ranges: each launch placed at one node, every node rolled up over
its subtree (time, FLOPs per precision, bytes per level, judged as any group is), split into forward and
backward, its own launches beside its children's.

Where a launch goes:
- its push/pop ranges, outermost first, are its path (user ranges such as `measure`, and the module ranges
  `profile --modules` pushes: `encoder`, `encoder.layers.0`, ...);
- the operator ranges of torch's `emit_nvtx` (`aten::linear`, `autograd::engine::evaluate_function: MmBackward0`,
  `MmBackward0`, `Optimizer.step#SGD.step`) fold into the node around them, so the tree reads as the model;
- a backward launch runs on autograd's threads, outside the program's push/pop ranges: it goes to the node of
  the innermost module whose backward start/end range (`attn [backward]`; `backward/attn` in captures made
  before `--modules`) is open, at the path where that module ran forward; one outside every module's backward
  goes to the root, as backward;
- a step's start/end range (`step 3`) names its step and is not part of the path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .grouping import aggregate, factorize_filled
from .nvtx import normalize_nvtx
from .roofline import Gpus, derive

ROOT = "(all launches)"
BACKWARD_SUFFIX = " [backward]"
_LEGACY_BACKWARD = "backward"  # `backward/attn`: the project's H100 captures' own hooks (tests/data/gpu)
_STEP = re.compile(r"step (\d+)")
# emit_nvtx's operator ranges and record_function labels: `aten::mm`, `autograd::engine::...`, `MmBackward0`,
# `Optimizer.step#SGD.step`. A module's qualified name has none of `::`, `#` or a `Backward<N>` ending.
_OPERATOR = re.compile(r"::|#|Backward\d*$")
# A named NVTX domain's part of the path text (core/readers: `domain:range/range`); the default domain is unnamed.
_NAMED_DOMAIN = re.compile(r"^[^/:]+:(?!:)")


@dataclass(frozen=True)
class Placed:
    """Where one distinct NVTX path puts its launches."""

    node: tuple[str, ...]  # the path of range names below the root; () is the root
    backward: bool
    step: int | None
    modules: tuple[str, ...]  # for a backward launch, the modules whose backward range is open


def ranges_of(nvtx: str | None) -> list[str]:
    """The default domain's ranges of a launch, push/pop then start/end, emit_nvtx's arguments left out."""
    if not nvtx:
        return []
    parts = str(nvtx).split(" | ")
    if len(parts) > 1:  # a named domain's ranges (`domain:range/...`, core/readers) beside the default domain's
        parts = [p for p in parts if not _NAMED_DOMAIN.match(p)]
    tokens = [t for p in parts for t in normalize_nvtx(p).split("/") if t]
    merged: list[str] = []
    for token in tokens:  # `backward` `attn` -> `backward/attn`, one range of the earlier captures
        if merged and merged[-1] == _LEGACY_BACKWARD:
            merged[-1] = f"{_LEGACY_BACKWARD}/{token}"
        else:
            merged.append(token)
    return merged


def place(ranges: list[str]) -> Placed:
    """The node, direction and step of a launch with these ranges (before backward modules are resolved to the
    path where they ran forward)."""
    path: list[str] = []
    modules: list[str] = []
    step = None
    engine = False
    for r in ranges:
        if (m := _STEP.fullmatch(r)) is not None:
            step = int(m.group(1))
        elif r.endswith(BACKWARD_SUFFIX):
            modules.append(r.removesuffix(BACKWARD_SUFFIX))
        elif r.startswith(_LEGACY_BACKWARD + "/"):
            modules.append(r.removeprefix(_LEGACY_BACKWARD + "/"))
        elif _OPERATOR.search(r):
            engine = engine or r.startswith("autograd::engine")
        else:
            path.append(r)
    backward = bool(modules) or engine
    return Placed(tuple(path), backward, step, tuple(modules))


def placements(nvtx: pd.Series) -> tuple[np.ndarray, list[Placed]]:
    """Each launch's number among the distinct placements, and those placements: a backward launch's node is
    where the innermost module whose backward range is open ran forward (its first forward launch's path; the
    deepest such path, since a module's range opens when its output's gradient arrives, after its parent's
    may have), else that module alone under the root."""
    codes, texts = factorize_filled(nvtx, "")
    raw = [place(ranges_of(t)) for t in texts]
    forward_at: dict[str, tuple[str, ...]] = {}
    for p in raw:
        if not p.backward:
            for depth, name in enumerate(p.node):
                forward_at.setdefault(name, p.node[: depth + 1])

    def node_of(modules: tuple[str, ...]) -> tuple[str, ...]:
        paths = [forward_at.get(m, (m,)) for m in modules]
        return max(reversed(paths), key=len)  # the deepest; of equals, the last opened

    resolved = [Placed(node_of(p.modules), True, p.step, p.modules) if p.modules else p for p in raw]
    return codes, resolved


def module_tree(kernels: pd.DataFrame, gpu: Gpus) -> pd.DataFrame:
    """One row per node, depth first, children longest first: `path` (names joined by `/`, "" for the root),
    `name`, `depth`, the canonical columns summed over the subtree and judged as a group is, `pct_time` of all
    launches, `own_duration_s` (its launches outside its children), `forward_duration_s` and
    `backward_duration_s`."""
    codes, placed = placements(kernels["nvtx"])
    launch_rows, node_keys = _subtrees(codes, placed)
    exploded = kernels.take(launch_rows).reset_index(drop=True)
    exploded["module_path"] = node_keys
    rows = derive(aggregate(exploded, "module_path"), gpu, launch_peaks=True)
    total = kernels["duration_s"].sum()
    rows["pct_time"] = 100.0 * rows["duration_s"] / total if total else np.nan
    duration = exploded["duration_s"].fillna(0.0).to_numpy()
    backward = np.array([p.backward for p in placed], dtype=bool)[codes][launch_rows]
    split = pd.DataFrame({"f": np.where(backward, 0.0, duration), "b": np.where(backward, duration, 0.0)})
    sums = split.groupby(node_keys, sort=False).sum()
    rows["forward_duration_s"] = rows["module_path"].map(sums["f"]).to_numpy()
    rows["backward_duration_s"] = rows["module_path"].map(sums["b"]).to_numpy()
    own_keys = np.array(["/".join(p.node) for p in placed], dtype=object)[codes]
    own = kernels["duration_s"].groupby(own_keys).sum(min_count=1)
    rows["own_duration_s"] = rows["module_path"].map(own).fillna(0.0).to_numpy()
    return _depth_first(rows.rename(columns={"module_path": "path"}))


def _subtrees(codes: np.ndarray, placed: list[Placed]) -> tuple[np.ndarray, np.ndarray]:
    """Each launch once per node on its path (root included): the launch's row number and the node's key."""
    chains = [["/".join(p.node[:d]) for d in range(len(p.node) + 1)] for p in placed]
    lengths = np.array([len(c) for c in chains])[codes]
    rows = np.repeat(np.arange(len(codes)), lengths)
    keys = np.concatenate([np.asarray(chains[c], dtype=object) for c in codes]) if len(codes) else np.array([])
    return rows, keys


def _depth_first(rows: pd.DataFrame) -> pd.DataFrame:
    """Parents before children, siblings longest first."""
    rows["depth"] = rows["path"].map(lambda p: 0 if p == "" else p.count("/") + 1)
    rows["name"] = rows["path"].map(lambda p: p.rsplit("/", 1)[-1] if p else ROOT)
    return sort_siblings(rows, "duration_s")


def sort_siblings(tree: pd.DataFrame, column: str, descending: bool = True) -> pd.DataFrame:
    """The same tree (rows with a `path`), parents before children, each node's children ordered by `column`
    (unknown last either way, ties as they were)."""
    return tree.iloc[tree_order(tree["path"].tolist(), tree[column], descending)].reset_index(drop=True)


def parent_path(path: str) -> str:
    """`measure/forward/mlp` -> `measure/forward`; a top node's parent is the root, ""."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def tree_order(paths: list[str], keys: pd.Series, descending: bool = True) -> np.ndarray:
    """The positions of the nodes `paths` depth first, siblings by `keys` (one per path; unknown last). A node
    whose parent is not among them (a cut tree) counts as a child of the root."""
    ranked = keys.reset_index(drop=True).sort_values(ascending=not descending, na_position="last", kind="stable")
    present = set(paths)
    children: dict[str, list[int]] = {}
    for i in ranked.index.to_numpy():
        if paths[i]:
            parent = parent_path(paths[i])
            children.setdefault(parent if parent in present else "", []).append(i)
    order = [i for i, p in enumerate(paths) if p == ""][:1]
    stack = list(reversed(children.get("", [])))
    while stack:
        at = stack.pop()
        order.append(at)
        stack.extend(reversed(children.get(paths[at], [])))  # the first sibling popped first
    return np.array(order, dtype=np.intp)


def launches_under(kernels: pd.DataFrame, path: str) -> np.ndarray:
    """Which launches a node's roll-up holds (its subtree's): as `module_tree` places them; "" is every one."""
    codes, placed = placements(kernels["nvtx"])
    node = tuple(path.split("/")) if path else ()
    under = np.array([p.node[: len(node)] == node for p in placed], dtype=bool)
    chosen: np.ndarray = under[codes]
    return chosen
