"""A one-line question in a small modal: the filter and the export path. Dismisses with the text or None."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class PromptScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "", hint: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Label(self.question, markup=False)
            yield Input(self.value, id="answer")
            yield Label(self.hint or "enter: OK · escape: cancel", classes="hint", markup=False)

    def on_mount(self) -> None:
        # Focus now, not when the screen is resumed: keys typed right after the one that opened the prompt
        # (a burst over SSH: `/gemm`) arrive before that, and would find nothing focused and be lost.
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
