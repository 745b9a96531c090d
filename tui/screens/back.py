"""`escape` goes back: only where there is a screen of the app's own to go back to."""

from __future__ import annotations

from textual.screen import Screen


def can_go_back(screen: Screen) -> bool:
    """True when a screen of the app's own lies beneath `screen` (not Textual's blank default screen): the
    same screen can be an app's first (diff, sweep) or pushed from another (the Runs screen)."""
    stack = screen.app.screen_stack
    below = stack[stack.index(screen) - 1] if screen in stack and stack.index(screen) > 0 else None
    return below is not None and below.id != "_default"
