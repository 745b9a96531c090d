"""A footer that fits its width: every key of the screen shows, and `esc Back ? Help q Quit` never fall off.

Textual's Footer lays keys out in one row and cuts what does not fit, so at 60 columns the app's own keys
(help, quit), which come last, were the first to go, and screens hid keys to make room. Here the way out
(`escape`) and the app's keys come last and stay whole; the screen's other keys lose their descriptions
first, rightmost first (`?` still describes them), then, only if even bare keys do not fit, the rightmost
keys themselves.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

_GAP = 1  # a compact footer's margin after each key


class KeyFooter(Footer):
    def __init__(self) -> None:
        super().__init__(compact=True)
        self._laid_out_for = -1

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        width = self.size.width or self.app.size.width
        self._laid_out_for = width
        for binding, enabled, tooltip, description in self.keys(width):
            yield FooterKey(binding.key, self.app.get_key_display(binding), description, binding.action,
                            disabled=not enabled, tooltip=tooltip).data_bind(compact=Footer.compact)

    def keys(self, width: int) -> list[tuple[Binding, bool, str, str]]:
        """(binding, enabled, tooltip, description shown) per key, `escape` and the app's keys last, within
        `width`."""
        own, back, app_keys, seen = [], [], [], set()
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            group = app_keys if node is self.app else back if binding.key == "escape" else own
            group.append([binding, enabled, tooltip, binding.description])
        shown = [*own, *back, *app_keys]
        for entry in reversed(own):  # descriptions go first, from the right
            if self._width(shown) <= width:
                break
            entry[3] = ""
        while own and self._width(shown) > width:  # then whole keys, from the right
            shown.remove(own.pop())
        return [tuple(entry) for entry in shown]

    def _width(self, entries: list[list]) -> int:
        """Cells the keys take; the last one's margin may fall off the end."""
        return -_GAP + sum(cell_len(self.app.get_key_display(binding)) + (1 + cell_len(text) if text else 0) + _GAP
                   for binding, _, _, text in entries)

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._laid_out_for and self._bindings_ready:
            self.call_after_refresh(self.recompose)
