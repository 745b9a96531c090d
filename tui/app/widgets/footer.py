"""A footer that fits its width: every key of the screen shows, and `esc Back ? Help q Quit` never
fall off.

Textual's Footer lays keys out in one row and cuts what does not fit, so at 60 columns the app's own
keys (help, quit), which come last, were the first to go, and screens hid keys to make room. Here
the way out (`escape`) and the app's keys come last and stay whole; the screen's other keys lose
their descriptions first, rightmost first (`?` still describes them), then, only if even bare keys
do not fit, the rightmost keys themselves. Drawn as one line of text from the public
`Screen.active_bindings`, redrawn when the screen's bindings change (`bindings_updated_signal`) or
the width does."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.widget import Widget

_GAP = 1  # cells after each key
_Key = tuple[Binding, bool, str, str]  # (binding, enabled, tooltip, description shown)


class KeyFooter(Widget, can_focus=False):
    """One row of the screen's active bindings (`Screen.active_bindings`, public API), drawn as
    text: key in bold, then its description; a click on a key presses it."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-footer--key", "key-footer--description"}
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .key-footer--key {
            color: $footer-key-foreground; background: $footer-key-background; text-style: bold;
        }
        .key-footer--description {
            color: $footer-description-foreground; background: $footer-description-background;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._spans: list[tuple[int, int, str]] = []  # (first cell, end cell, key) per key drawn

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, lambda _screen: self.refresh())

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-footer--key")
        description_style = self.get_component_rich_style("key-footer--description")
        text, self._spans = Text(no_wrap=True, overflow="crop"), []
        for binding, enabled, _tooltip, description in self.keys(self.size.width):
            if text:
                text.append(" " * _GAP)
            start = text.cell_len
            text.append(self.app.get_key_display(binding), key_style)
            if description:
                text.append(" " + description, description_style)
            if not enabled:
                text.stylize("dim", start)
            self._spans.append((start, text.cell_len, binding.key))
        return text

    def on_click(self, event: Click) -> None:
        key = next((key for start, end, key in self._spans if start <= event.x < end), None)
        if key is not None:
            self.app.simulate_key(key)

    def keys(self, width: int) -> list[_Key]:
        """(binding, enabled, tooltip, description shown) per key, `escape` and the app's keys last,
        within `width`."""
        own: list[_Key] = []
        back: list[_Key] = []
        app_keys: list[_Key] = []
        seen: set[str] = set()
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            group = app_keys if node is self.app else back if binding.key == "escape" else own
            group.append((binding, enabled, tooltip, binding.description))
        for index in reversed(range(len(own))):  # descriptions go first, from the right
            if self._width([*own, *back, *app_keys]) <= width:
                break
            binding, enabled, tooltip, _ = own[index]
            own[index] = (binding, enabled, tooltip, "")
        # then whole keys, from the right
        while own and self._width([*own, *back, *app_keys]) > width:
            own.pop()
        return [*own, *back, *app_keys]

    def _width(self, entries: list[_Key]) -> int:
        """Cells the keys take, gaps between them."""
        return -_GAP + sum(
            cell_len(self.app.get_key_display(binding)) + (1 + cell_len(text) if text else 0) + _GAP
            for binding, _, _, text in entries
        )
