"""`?`: every key of the screen underneath, read from its bindings (never a hand-written list)."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static


def binding_rows(screen: Screen) -> list[tuple[str, str, str]]:
    """(where, keys, what) for each active binding of `screen`: its own, its focused widget's, the app's."""
    app = screen.app
    own = {b.action for b in type(screen).BINDINGS if isinstance(b, Binding)}
    rows: dict[tuple[str, str], str] = {}  # (where, description) -> keys; one line per action
    for key, active in screen.active_bindings.items():
        binding: Binding = active.binding
        if not active.enabled or binding.system:
            continue
        where = _where(active.node, screen, binding.action in own)
        what = binding.description or binding.action
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
    return {"KernelTable": "table"}.get(type(node).__name__, type(node).__name__.lower())


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark", "close", "Close help")]

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
            yield Label(f"Keys: {self.target.__class__.__name__.removesuffix('Screen')} screen (escape closes)")
            with VerticalScroll(id="help-body"):
                yield Static(table)

    def action_close(self) -> None:
        self.dismiss(None)

    def text(self) -> str:
        """Everything listed, as plain text (for tests)."""
        return "\n".join(f"{keys}  {what}  {where}" for where, keys, what in self.rows)
