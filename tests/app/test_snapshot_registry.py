"""Every screen and dialog of the app has a stored snapshot: each Screen class defined under
tui/app (found by importing every module there) is named in tests/helpers/snapshots.py's SHOWN_BY
with the SVGs that show it, or in BASES when it is only shown as a subclass; and every SVG in
tests/snapshots/ is claimed by a screen, so that the registry stays the list of what is pictured."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import flopscope.tui.app
from textual.screen import Screen

from ..helpers.snapshots import BASES, SHOWN_BY, SNAPSHOTS


def app_screens() -> dict[str, type[Screen]]:
    """Name -> class of each Screen subclass defined in a module under flopscope.tui.app."""
    found: dict[str, type[Screen]] = {}
    for info in pkgutil.walk_packages(flopscope.tui.app.__path__, "flopscope.tui.app."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, Screen)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def test_every_screen_class_has_a_snapshot():
    screens = app_screens()
    assert "KernelsScreen" in screens and "HelpScreen" in screens  # the walk found the screens
    missing = sorted(set(screens) - set(SHOWN_BY) - BASES)
    assert not missing, (
        f"screens without a snapshot: {missing}; add a snapshot test (tests/app/test_snapshots*.py)"
        " and name its SVGs in SHOWN_BY (tests/helpers/snapshots.py)"
    )
    gone = sorted((set(SHOWN_BY) | BASES) - set(screens))
    assert not gone, f"SHOWN_BY or BASES names classes that are no screens under tui/app: {gone}"


def test_each_base_is_only_shown_as_a_subclass_that_has_snapshots():
    screens = app_screens()
    for base in BASES:
        shown = [n for n, c in screens.items() if issubclass(c, screens[base]) and n in SHOWN_BY]
        assert shown, f"{base} is listed as a base, but no screen with snapshots derives from it"


def test_each_named_snapshot_is_stored_and_each_stored_one_is_named():
    named = [name for names in SHOWN_BY.values() for name in names]
    assert len(named) == len(set(named)), "a snapshot is claimed by two screens"
    stored = {path.stem for path in SNAPSHOTS.glob("*.svg")}
    absent, unnamed = sorted(set(named) - stored), sorted(stored - set(named))
    assert not absent, f"named in SHOWN_BY, not stored in {SNAPSHOTS}: {absent}"
    assert not unnamed, f"stored in {SNAPSHOTS}, named by no screen in SHOWN_BY: {unnamed}"
