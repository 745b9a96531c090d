"""Lazy re-exports for the stage packages' `__init__` (PEP 562): `from flopscope.core.report import
Report` imports only the module that defines it, so `flopscope --version` never pays for pandas."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for PACKAGE, whose name N is `getattr(PACKAGE.exports[N], N)`."""

    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{exports[name]}", package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
