"""One line saying where the screen is: each screen down the stack that has a `crumbs` property adds
its parts (`demo.ncu-rep › by name`, then the Kernel screen's `nvjet_…`), fitted to the width by
`presentation.breadcrumb.crumbs` (earlier parts cut first)."""

from __future__ import annotations

from rich.text import Text
from textual.screen import Screen
from textual.widget import Widget

from ...presentation.breadcrumb import SEP, crumbs


def trail(screen: Screen) -> list[str]:
    """The parts of every screen from the app's first up to `screen` (dialogs above it are not
    places)."""
    stack = screen.app.screen_stack
    below = stack[: stack.index(screen) + 1] if screen in stack else [screen]
    return [part for s in below for part in getattr(s, "crumbs", None) or []]


class Breadcrumb(Widget):
    DEFAULT_CSS = """
    Breadcrumb { height: 1; padding: 0 1; }
    """

    def render(self) -> Text:
        parts = crumbs(trail(self.screen), self.content_size.width)
        text = Text(no_wrap=True)
        for part in parts[:-1]:
            text.append(part + SEP, style="dim")
        if parts:
            text.append(parts[-1], style="bold")
        return text
