"""Short, readable kernel names from ncu's demangled signatures."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=65536)
def short_name(full: str | None) -> str:
    """`void ns::k<float, Foo<int>>(float *, int)` -> `ns::k<float, Foo<…>>`.

    Drops the return type and the parameter list, keeps the first level of template arguments (what tells
    CUTLASS/cuBLAS instantiations apart) and elides deeper levels.
    """
    if not full:
        return ""
    name = _strip_params(full.strip())
    if name.startswith("void "):
        name = name[5:]
    return _elide_templates(name)


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


def _elide_templates(name: str) -> str:
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 2:
                out.append("<…")
                continue
        elif ch == ">":
            depth -= 1
            if depth == 1:
                out.append(">")
                continue
        if depth < 2:
            out.append(ch)
    return "".join(out)


@lru_cache(maxsize=65536)
def function_name(full: str | None) -> str:
    """The name ncu's `--kernel-name` matches by default (`--kernel-name-base function`): no return type,
    namespaces, template arguments or parameters. `void ns::k<float, F<int>>(float *)` -> `k`."""
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
