"""Short, readable kernel names from ncu's demangled signatures."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=65536)
def short_name(full: str | None) -> str:
    """`void ns::k<float, Foo<int>>(float *, int)` -> `ns::k<float, Foo<…>>`.

    Drops the return type and the parameter list, keeps the first level of template arguments (what
    tells CUTLASS/cuBLAS instantiations apart) and elides deeper levels."""
    if not full:
        return ""
    name = _strip_params(full.strip())
    if name.startswith("void "):
        name = name[5:]
    return _with_tile(_elide_templates(name), name)


# CUTLASS's element types as its kernel names (`cutlass_80_tensorop_bf16_s16816gemm_...`) spell
# them.
_ELEMENT = {
    "signed char": "s8",
    "unsigned char": "u8",
    "int": "s32",
    "float": "f32",
    "double": "f64",
    "__half": "f16",
    "cutlass::half_t": "f16",
    "cutlass::bfloat16_t": "bf16",
    "__nv_bfloat16": "bf16",
    "cutlass::tfloat32_t": "tf32",
    "cutlass::float_e4m3_t": "e4m3",
    "cutlass::float_e5m2_t": "e5m2",
    "cutlass::int4b_t": "s4",
    "cutlass::uint4b_t": "u4",
}
_TILE = re.compile(r"GemmShape<\(int\)(\d+), \(int\)(\d+), \(int\)(\d+)>")
_TYPES = "|".join(map(re.escape, _ELEMENT))
# a template argument, not `(int)32`
_FIRST_ELEMENT = re.compile(rf"(?:(?<=[<,] )|(?<=<))({_TYPES})(?=[,>])")


def _with_tile(short: str, name: str) -> str:
    """A CUTLASS kernel's short name with the threadblock tile and element type its elided template
    arguments hold: `cutlass::Kernel<cutlass::gemm::kernel::Gemm<…>>` -> `...::Gemm<128x96x64
    s8…>>`. Without them two GEMMs of one kernel template read alike however wide the column."""
    tile = _TILE.search(name)
    if tile is None or "<…" not in short:
        return short
    element = _FIRST_ELEMENT.search(name)
    digest = "x".join(tile.groups()) + (f" {_ELEMENT[element.group(1)]}" if element else "")
    return short.replace("<…", f"<{digest}…", 1)


def distinct_short_names(fulls: Iterable[str]) -> dict[str, str]:
    """Each full name's short name, different for different full names. Two instantiations of one
    template often differ only below the first level (`elementwise_kernel<128, 4,
    gpu_kernel_impl_nocast<CUDAFunctor_add<…>>` vs `<…direct_copy_kernel_cuda…>`): those that would
    read the same keep one more level of template arguments at a time, then their parameter list,
    then the whole signature, until they differ."""
    every = list(dict.fromkeys(f or "" for f in fulls))
    level = dict.fromkeys(every, 0)
    shown = {f: short_name(f) for f in every}
    while True:
        groups: dict[str, list[str]] = {}
        for full in every:
            groups.setdefault(shown[full], []).append(full)
        colliding = [group for group in groups.values() if len(group) > 1]
        if not colliding:
            return shown
        for group in colliding:
            for full in group:
                level[full] += 1
                shown[full] = _shortened(full, level[full])


def _shortened(full: str, level: int) -> str:
    """Level 0 is `short_name`; each level keeps one more depth of template arguments, up to the
    name without its parameter list; then with it (no return type); then `full` itself."""
    name = _strip_params(full.strip()).removeprefix("void ")
    depth = max(_depth(name), 1)
    if level < depth:
        return _elide_templates(name, level + 1)
    if level == depth:
        return name
    return full.strip().removeprefix("void ") if level == depth + 1 else full


def _depth(name: str) -> int:
    """How deep template argument lists nest in `name`."""
    deepest = depth = 0
    for ch in name:
        depth += (ch == "<") - (ch == ">" and depth > 0)
        deepest = max(deepest, depth)
    return deepest


def _strip_params(name: str) -> str:
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        ch = name[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                return name[:i] if i else name
    return name


def _elide_templates(name: str, keep: int = 1) -> str:
    """`name` with template argument lists deeper than `keep` levels shown as `<…>`."""
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == keep + 1:
                out.append("<…")
                continue
        elif ch == ">":
            depth -= 1
            if depth == keep:
                out.append(">")
                continue
        if depth <= keep:
            out.append(ch)
    return "".join(out)


@lru_cache(maxsize=65536)
def function_name(full: str | None) -> str:
    """The name ncu's `--kernel-name` matches by default (`--kernel-name-base function`): no return
    type, namespaces, template arguments or parameters. `void ns::k<float, F<int>>(float *)` ->
    `k`."""
    if not full:
        return ""
    name = _strip_params(full.strip())
    out, depth = [], 0
    for ch in name:  # drop every template argument list, however deep
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">" and depth > 0
    bare = "".join(out)
    bare = bare.rsplit(" ", 1)[-1]  # the return type (`void `) and any qualifier before the name
    return bare.rsplit("::", 1)[-1]
