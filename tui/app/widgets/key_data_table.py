"""A DataTable (the live profile's and live sweep's) that moves with the keys every list here moves
with: j/k and g/G beside the arrows and page keys Textual gives it, and home/end that move the
cursor (not only the view)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class KeyDataTable(DataTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="keydatatable.down"),
        Binding("k", "cursor_up", "Up", show=False, id="keydatatable.up"),
        Binding("g", "scroll_top", "Top", show=False, id="keydatatable.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="keydatatable.bottom"),
        # DataTable's own home/end scroll and leave the cursor where it was: here they take it, as
        # in every list.
        Binding("home", "scroll_top", "First row", show=False, id="keydatatable.first_row"),
        Binding("end", "scroll_bottom", "Last row", show=False, id="keydatatable.last_row"),
    ]
