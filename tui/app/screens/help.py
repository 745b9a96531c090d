"""`?`: every key of the screen underneath, read from its bindings (never a hand-written list), in
words a person uses: the screen's own name, `table` or `scrolling pane` rather than a widget's
class."""

from __future__ import annotations

import re
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Label, OptionList, Static

from ..widgets.kernel_table import KernelTable

# Textual's copy copies text selected with the mouse, which the app never captures (the terminal's
# own selection works instead): listed, `ctrl+c Copy selected text` would be a key that does
# nothing.
NEEDS_MOUSE = {"screen.copy_text"}


def binding_rows(screen: Screen) -> list[tuple[str, str, str]]:
    """(where, keys, what) for each active binding of `screen`: its own, its focused widget's, the
    app's."""
    app = screen.app
    own = {b.action for b in type(screen).BINDINGS if isinstance(b, Binding)}
    rows: dict[tuple[str, str], str] = {}  # (where, description) -> keys; one line per action
    for key, active in screen.active_bindings.items():
        binding: Binding = active.binding
        if not active.enabled or binding.system or binding.action in NEEDS_MOUSE:
            continue
        where = _where(active.node, screen, binding.action in own)
        what = sentence_case(binding.description or binding.action)
        keys = app.get_key_display(Binding(key, binding.action, key_display=binding.key_display))
        entry = (where, what)
        rows[entry] = f"{rows[entry]}, {keys}" if entry in rows else keys
    order = {"this screen": 0, "all screens": 2, "everywhere": 3}
    listed = [(where, keys, what) for (where, what), keys in rows.items()]
    return sorted(listed, key=lambda r: order.get(r[0], 1))


def _where(node: object, screen: Screen, own: bool) -> str:
    if node is screen.app:
        return "everywhere"
    if node is screen:
        return "this screen" if own else "all screens"  # the latter: Textual's own (focus, copy)
    for kind, words in (
        (KernelTable, "table"),
        (DataTable, "table"),
        (OptionList, "list"),
        (Input, "text field"),
        (ScrollableContainer, "scrolling pane"),
    ):
        if isinstance(node, kind):
            return words
    return _words(type(node).__name__)


def screen_title(screen: Screen) -> str:
    """`Kernels`: a screen's HELP_TITLE, else its class name in words (`RooflineScreen` ->
    `Roofline`)."""
    return (
        getattr(screen, "HELP_TITLE", None)
        or _words(type(screen).__name__.removesuffix("Screen")).capitalize()
    )


def _words(name: str) -> str:
    return " ".join(re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)).lower() or name.lower()


def sentence_case(text: str) -> str:
    """`Page Left` -> `Page left`, as the app's own keys read (`Page up`); `NVTX`, `Sort…` stay as
    written."""
    first, *rest = text.split(" ")
    return " ".join(
        [first, *(w.lower() if w[:1].isupper() and w[1:].islower() else w for w in rest)]
    )


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "close", "Close help", id="help.close"),
        # as everywhere: a modal held the app's `q` back
        Binding("q", "app.quit", "Quit", id="help.quit"),
        # the keys that move on every screen move here too: the list is longer than 24 rows
        Binding("j,down", "scroll_by(1)", "Scroll down", show=False, id="help.scroll_down"),
        Binding("k,up", "scroll_by(-1)", "Scroll up", show=False, id="help.scroll_up"),
        Binding("pagedown,space", "page(1)", "Page down", show=False, id="help.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="help.page_up"),
        Binding("home,g", "edge(0)", "Top", show=False, id="help.top"),
        Binding("end,G", "edge(1)", "Bottom", show=False, id="help.bottom"),
    ]

    def __init__(self, target: Screen) -> None:
        super().__init__()
        self.target = target
        self.rows = binding_rows(target)

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        table.add_column("Key", no_wrap=True)
        table.add_column("Does")
        table.add_column("Where", style="dim", no_wrap=True)
        for where, keys, what in self.rows:
            table.add_row(Text(keys), Text(what), Text(where))
        with Vertical(id="help"):
            yield Label(f"Keys: {screen_title(self.target)} screen (escape closes)")
            with VerticalScroll(id="help-body"):
                yield Static(table)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll_by(self, lines: int) -> None:
        self.query_one("#help-body").scroll_relative(y=lines, animate=False)

    def action_page(self, pages: int) -> None:
        body = self.query_one("#help-body")
        body.scroll_relative(
            y=pages * max(1, body.scrollable_content_region.height - 1), animate=False
        )

    def action_edge(self, end: int) -> None:
        body = self.query_one("#help-body")
        body.scroll_to(y=body.max_scroll_y if end else 0, animate=False)

    def text(self) -> str:
        """Everything listed, as plain text (for tests)."""
        return "\n".join(f"{keys}  {what}  {where}" for where, keys, what in self.rows)
