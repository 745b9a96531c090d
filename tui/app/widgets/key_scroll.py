"""A scrolling pane that moves with the keys every list here moves with (j/k, g/G, space), beside
the arrows, page keys, home and end Textual gives it, and shows when it has the focus."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll


class KeyScroll(VerticalScroll):
    # The focus mark drawn over the padding's cell: a bar at the left edge (NO_COLOR too), not over
    # the text.
    DEFAULT_CSS = """
    KeyScroll { padding: 0 1; }
    KeyScroll:focus { background: $boost; outline-left: outer $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Down", show=False, id="keyscroll.down"),
        Binding("k", "scroll_up", "Up", show=False, id="keyscroll.up"),
        Binding("g", "scroll_home", "Top", show=False, id="keyscroll.top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="keyscroll.bottom"),
        Binding("space", "page_down", "Page down", show=False, id="keyscroll.page_down"),
    ]
