"""A model's module tree from the launches' NVTX ranges: each launch placed at one node, every node
rolled up over its subtree (time, FLOPs per precision, bytes per level, judged as any group is),
split into forward and backward, its own launches beside its children's.

Where a launch goes:
- its push/pop ranges, outermost first, are its path (user ranges such as `measure`, and the module
  ranges `profile --modules` pushes: `encoder`, `encoder.layers.0`, ...);
- the operator ranges of torch's `emit_nvtx` (`aten::linear`, `autograd::engine::evaluate_function:
  MmBackward0`, `MmBackward0`, `Optimizer.step#SGD.step`) fold into the node around them, so the
  tree reads as the model;
- a backward launch runs on autograd's threads, outside the program's push/pop ranges: it goes to
  the node of the innermost module whose backward start/end range (`attn [backward]`;
  `backward/attn` in captures made before `--modules`) is open, at the path where that module ran
  forward; one outside every module's backward goes to the root, as backward;
- a step's start/end range (`step 3`) names its step and is not part of the path.

The ranges are the launches' structured NVTX stacks (`nvtx_stack`, core/common/nvtx_stack.py): a
range name is one node whatever it holds (`/`, `:`). A node's `path` joins its names with NODE_SEP,
a character the readers keep out of names; `path_names` gives them as a list and `display_path` as
people read them (`a/b`).

On a file whose launches ran on several GPUs, the level under the root is the GPU (`GPU 0: NVIDIA
H100 ...`), each holding its launches' tree: a data-parallel step's ranks side by side, the root
their sum."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..common.nvtx_stack import default_ranges
from .grouping import aggregate, factorize_filled
from .nvtx import normalize_nvtx, stacks_of
from .roofline import Gpus, derive

ROOT = "(all launches)"
BACKWARD_SUFFIX = " [backward]"
# `backward/attn`: the project's H100 captures' own hooks (tests/data/gpu)
_LEGACY_BACKWARD = "backward"
_STEP = re.compile(r"step (\d+)")
# emit_nvtx's operator ranges and record_function labels: `aten::mm`, `autograd::engine::...`,
# `MmBackward0`, `Optimizer.step#SGD.step`. A module's qualified name has none of `::`, `#` or a
# `Backward<N>` ending.
_OPERATOR = re.compile(r"::|#|Backward\d*$")
# between the names of a node's path (no range name holds it: core/common/nvtx_stack.py)
NODE_SEP = "\x1f"


@dataclass(frozen=True)
class Placed:
    """Where one distinct NVTX path puts its launches."""

    node: tuple[str, ...]  # the path of range names below the root; () is the root
    backward: bool
    step: int | None
    modules: tuple[str, ...]  # for a backward launch, the modules whose backward range is open


def ranges_of(stack: object) -> list[str]:
    """The default domain's ranges of a launch's NVTX stack (`nvtx_stack`; a lone named domain's
    where it is the only one), push/pop then start/end, emit_nvtx's arguments left out."""
    merged: list[str] = []
    for name in default_ranges(stack):
        token = normalize_nvtx(name)
        if not token:
            continue
        # `backward` `attn` -> `backward/attn`, one range of the
        if merged and merged[-1] == _LEGACY_BACKWARD:
            merged[-1] = f"{_LEGACY_BACKWARD}/{token}"  # earlier captures
        else:
            merged.append(token)
    return merged


def place(ranges: list[str]) -> Placed:
    """The node, direction and step of a launch with these ranges (before backward modules are
    resolved to the path where they ran forward)."""
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


def placements(stacks: pd.Series) -> tuple[np.ndarray, list[Placed]]:
    """Each launch's number among the distinct placements, and those placements: a backward launch's
    node is where the innermost module whose backward range is open ran forward (its first forward
    launch's path; the deepest such path, since a module's range opens when its output's gradient
    arrives, after its parent's may have), else that module alone under the root. `stacks`: the
    launches' `nvtx_stack` (`stacks_of`)."""
    codes, texts = factorize_filled(stacks, "")
    raw = [place(ranges_of(t)) for t in texts]
    forward_at: dict[str, tuple[str, ...]] = {}
    for p in raw:
        if not p.backward:
            for depth, name in enumerate(p.node):
                forward_at.setdefault(name, p.node[: depth + 1])

    def node_of(modules: tuple[str, ...]) -> tuple[str, ...]:
        paths = [forward_at.get(m, (m,)) for m in modules]
        return max(reversed(paths), key=len)  # the deepest; of equals, the last opened

    resolved = [
        Placed(node_of(p.modules), True, p.step, p.modules) if p.modules else p for p in raw
    ]
    return codes, resolved


def launch_nodes(kernels: pd.DataFrame) -> tuple[np.ndarray, list[tuple[str, ...]], np.ndarray]:
    """Each launch's number among the distinct nodes launches are placed at, those nodes (paths of
    names below the root, the GPU first on a file of several) and whether each is a backward
    placement."""
    codes, placed = placements(stacks_of(kernels))
    gpus = gpu_levels(kernels)
    if gpus is None:
        return codes, [p.node for p in placed], np.array([p.backward for p in placed], dtype=bool)
    gpu_codes, labels = gpus
    pairs, firsts = pd.factorize(codes.astype(np.int64) * len(labels) + gpu_codes, sort=False)
    nodes = [(labels[f % len(labels)], *placed[f // len(labels)].node) for f in firsts.tolist()]
    backward = np.array([placed[f // len(labels)].backward for f in firsts.tolist()], dtype=bool)
    return pairs, nodes, backward


def _blank_missing(column: pd.Series) -> np.ndarray:
    """The column's values as objects (a copy), "" where missing: numpy, as pandas 2.x warns that
    fillna on objects will stop downcasting."""
    values: np.ndarray = column.to_numpy(dtype=object, copy=True)
    values[pd.isna(values)] = ""
    return values


def gpu_levels(kernels: pd.DataFrame) -> tuple[np.ndarray, list[str]] | None:
    """Each launch's GPU (a number into the labels `GPU <device>: <name>`), None where all ran on
    one."""
    parts = [_blank_missing(kernels[c]) for c in ("device", "gpu") if c in kernels]
    if not parts:
        return None
    pairs = pd.MultiIndex.from_arrays(parts) if len(parts) > 1 else pd.Index(parts[0])
    codes, distinct = pd.factorize(pairs, sort=True)
    if len(distinct) < 2:
        return None
    return codes, [_gpu_label(d if isinstance(d, tuple) else ("", d)) for d in distinct]


def _gpu_label(pair: tuple[object, ...]) -> str:
    device, name = (str(v) for v in pair[-2:])
    if device.endswith(".0"):
        device = device[:-2]
    return f"GPU {device}: {name}" if device and name else f"GPU {device or name or '?'}"


def module_tree(kernels: pd.DataFrame, gpu: Gpus) -> pd.DataFrame:
    """One row per node, depth first, children longest first: `path` (the names joined by NODE_SEP,
    "" for the root), `name`, `depth`, the canonical columns summed over the subtree and judged as a
    group is, `pct_time` of all launches, `own_duration_s` (its launches outside its children),
    `forward_duration_s` and `backward_duration_s`."""
    codes, nodes, backward_of = launch_nodes(kernels)
    launch_rows, node_keys = _subtrees(codes, nodes)
    exploded = kernels.take(launch_rows).reset_index(drop=True)
    exploded["module_path"] = node_keys
    rows = derive(aggregate(exploded, "module_path"), gpu, launch_peaks=True)
    total = kernels["duration_s"].sum()
    rows["pct_time"] = 100.0 * rows["duration_s"] / total if total else np.nan
    duration = exploded["duration_s"].fillna(0.0).to_numpy()
    backward = backward_of[codes][launch_rows]
    split = pd.DataFrame(
        {"f": np.where(backward, 0.0, duration), "b": np.where(backward, duration, 0.0)}
    )
    sums = split.groupby(node_keys, sort=False).sum()
    rows["forward_duration_s"] = rows["module_path"].map(sums["f"]).to_numpy()
    rows["backward_duration_s"] = rows["module_path"].map(sums["b"]).to_numpy()
    own_keys = np.array([NODE_SEP.join(n) for n in nodes], dtype=object)[codes]
    own = kernels["duration_s"].groupby(own_keys).sum(min_count=1)
    rows["own_duration_s"] = rows["module_path"].map(own).fillna(0.0).to_numpy()
    return _depth_first(rows.rename(columns={"module_path": "path"}))


def _subtrees(codes: np.ndarray, nodes: list[tuple[str, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """Each launch once per node on its path (root included): the launch's row number and the node's
    key."""
    chains = [[NODE_SEP.join(n[:d]) for d in range(len(n) + 1)] for n in nodes]
    lengths = np.array([len(c) for c in chains])[codes]
    rows = np.repeat(np.arange(len(codes)), lengths)
    keys = (
        np.concatenate([np.asarray(chains[c], dtype=object) for c in codes])
        if len(codes)
        else np.array([])
    )
    return rows, keys


def _depth_first(rows: pd.DataFrame) -> pd.DataFrame:
    """Parents before children, siblings longest first."""
    rows["depth"] = rows["path"].map(lambda p: 0 if p == "" else p.count(NODE_SEP) + 1)
    rows["name"] = rows["path"].map(lambda p: p.rsplit(NODE_SEP, 1)[-1] if p else ROOT)
    return sort_siblings(rows, "duration_s")


def path_names(path: str) -> list[str]:
    """A node's `path` as its list of names ([] for the root)."""
    return path.split(NODE_SEP) if path else []


def display_path(path: str) -> str:
    """A node's `path` as people read it, `measure/forward/mlp` (a name holding `/` reads as two
    here: the `path_names` list is the exact one)."""
    return "/".join(path_names(path))


def with_public_paths(tree: pd.DataFrame) -> pd.DataFrame:
    """The tree as outputs write it: `path` joined with `/` (as before the stacks were structured)
    and `path_names`, the list of names, the canonical one."""
    out = tree.copy()
    names = [path_names(str(p)) for p in tree["path"]]
    out["path"] = ["/".join(n) for n in names]
    out.insert(int(out.columns.get_loc("path")) + 1, "path_names", names)
    return out


def sort_siblings(tree: pd.DataFrame, column: str, descending: bool = True) -> pd.DataFrame:
    """The same tree (rows with a `path`), parents before children, each node's children ordered by
    `column` (unknown last either way, ties as they were)."""
    return tree.iloc[tree_order(tree["path"].tolist(), tree[column], descending)].reset_index(
        drop=True
    )


def parent_path(path: str) -> str:
    """`measure/forward/mlp` (its names joined by NODE_SEP) -> `measure/forward`; a top node's
    parent is the root, ""."""
    return path.rsplit(NODE_SEP, 1)[0] if NODE_SEP in path else ""


def tree_order(paths: list[str], keys: pd.Series, descending: bool = True) -> np.ndarray:
    """The positions of the nodes `paths` depth first, siblings by `keys` (one per path; unknown
    last). A node whose parent is not among them (a cut tree) counts as a child of the root."""
    ranked = keys.reset_index(drop=True).sort_values(
        ascending=not descending, na_position="last", kind="stable"
    )
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
    """Which launches a node's roll-up holds (its subtree's): as `module_tree` places them; "" is
    every one."""
    codes, nodes, _ = launch_nodes(kernels)
    node = tuple(path_names(path))
    under = np.array([n[: len(node)] == node for n in nodes], dtype=bool)
    chosen: np.ndarray = under[codes]
    return chosen
