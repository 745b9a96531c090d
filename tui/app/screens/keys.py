"""The key bindings several screens share, each declared once, with the id a `[keymap]` remaps it by
(keymap.py): `screen.` for keys every screen has, `table.` for those of the table screens (Kernels,
Runs, Diff). A screen lists them in its BINDINGS where they fall in its footer; its own keys are
`<screen>.<action>`."""

from __future__ import annotations

from textual.binding import Binding

EXPORT = Binding("e", "export", "Export", priority=True, id="screen.export")
BACK = Binding("escape", "back", "Back", id="screen.back")
COPY_NAME = Binding("y", "copy_name", "Copy full name", show=False, id="screen.copy_name")

SORT = Binding("s", "sort_column", "Sort", id="table.sort")
FILTER = Binding("slash", "filter", "Filter", key_display="/", priority=True, id="table.filter")
GROUP = Binding("g", "cycle_group", "Group", id="table.group")
# A first screen's escape: it has nowhere to go back to (a pushed table screen binds BACK, which
# clears a filter first).
CLEAR_FILTER = Binding(
    "escape", "clear_filter", "Clear filter", show=False, id="table.clear_filter"
)
