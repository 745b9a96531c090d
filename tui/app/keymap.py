"""Keys remapped by the user: the `[keymap]` table of `$FLOPSCOPE_HOME/config.toml`, binding id ->
keys, laid over the defaults with Textual's `App.set_keymap` (the approach posting takes). Every
Binding of the app has an id, `<screen>.<action>` (`kernels.roofline`), or `table.`/`screen.`/`app.`
for keys several screens share (`table.filter`, `screen.export`, `app.quit`); remapping a shared id
remaps it on every screen:

    [keymap]
    "kernels.roofline" = "R"
    "screen.export" = "x,ctrl+e"   # several keys: comma-separated; the default key is dropped
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

from textual.binding import Binding
from textual.dom import DOMNode

from ...core import FlopscopeError

# (where the keymap is read from)
from .config_file import CONFIG_FILE, config_path, read_section  # noqa: F401


def load_keymap(path: Path | None = None) -> dict[str, str]:
    """The `[keymap]` table of `path` (default `config_path()`); {} when there is no such file. A
    file that is not TOML, or names a binding the app does not have, is one FlopscopeError line (the
    CLI exits 2)."""
    path = path or config_path()
    return _checked(path, read_section(path, "keymap", '"binding.id" = "keys"'))


def _checked(path: Path, keymap: dict) -> dict[str, str]:
    if not keymap:  # nothing to check: the walk below imports every screen and widget module
        return keymap
    # ids are what a keymap names
    known = {binding.id for _, binding in app_bindings() if binding.id is not None}
    for binding_id, keys in keymap.items():
        if binding_id not in known:
            close = difflib.get_close_matches(binding_id, known, n=1, cutoff=0.8)
            fix = (
                f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(sorted(known))}"
            )
            raise FlopscopeError(path, f"[keymap] names no binding {binding_id!r}", fix)
        if not isinstance(keys, str) or not keys.strip():
            raise FlopscopeError(
                path,
                f"[keymap] {binding_id!r} is not a key string",
                'write keys as a string, e.g. "r" or "R,ctrl+r"',
            )
    return keymap


def app_bindings() -> Iterator[tuple[type[DOMNode], Binding]]:
    """(class, binding) for every Binding the app's classes declare themselves (App, screens,
    widgets)."""
    # every screen and widget module, so that their classes exist
    from . import app, screens, widgets

    for package in (screens, widgets):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    yield from _declared(app.FlopscopeApp)
    for cls in _subclasses(DOMNode):
        if cls.__module__.startswith(screens.__name__) or cls.__module__.startswith(
            widgets.__name__
        ):
            yield from _declared(cls)


def _declared(cls: type[DOMNode]) -> Iterator[tuple[type[DOMNode], Binding]]:
    for binding in cls.__dict__.get("BINDINGS", []):
        if isinstance(binding, Binding):
            yield cls, binding


def _subclasses(cls: type[DOMNode]) -> Iterator[type[DOMNode]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)
