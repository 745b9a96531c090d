"""A one-line question in a small modal: the filter and the export path. Dismisses with the text or None.

An answer that cannot be used (a regex that does not compile, an empty path, a folder that does not exist)
keeps the dialog open with the reason under the input and the text as typed, to be corrected rather than
retyped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ....core.common import display_text

# check(text) -> None when the answer can be used, else the reason it cannot (shown in the dialog).
Check = Callable[[str], str | None]


class PromptScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]
    DEFAULT_CSS = """
    PromptScreen #prompt-error { text-style: bold; color: $text-error; display: none; }
    PromptScreen #prompt-error.shown { display: block; }
    """

    def __init__(self, question: str, value: str = "", hint: str = "", check: Check | None = None) -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.hint = hint
        self.check = check
        self.error = ""  # the reason shown under the input, if any

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Label(self.question, markup=False)
            yield Input(self.value, id="answer")
            # Bold, not colour only: legible over SSH and with NO_COLOR. A Label wraps; a long path folds.
            yield Label("", id="prompt-error", markup=False)
            yield Label(self.hint or "enter: OK · escape: cancel", classes="hint", markup=False)

    def on_mount(self) -> None:
        # Focus now, not when the screen is resumed: keys typed right after the one that opened the prompt
        # (a burst over SSH: `/gemm`) arrive before that, and would find nothing focused and be lost.
        self.query_one(Input).focus()

    def show_error(self, message: str | None) -> None:
        """The reason the answer was not taken, under the input (None clears it)."""
        self.error = message or ""
        label = self.query_one("#prompt-error", Label)
        label.update(f"✗ {display_text(self.error)}")  # it may quote a path typed or from a report
        label.set_class(bool(self.error), "shown")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        problem = self.check(event.value) if self.check is not None else None
        if problem:
            self.show_error(problem)
            return
        self.submit(event.value)

    def on_input_changed(self, _: Input.Changed) -> None:
        self.show_error(None)  # the text changed: the old reason may no longer hold

    def submit(self, value: str) -> None:
        """A usable answer: close with it."""
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
