"""A one-line question in a small modal: the filter and the export path. Dismisses with the text or
None.

An answer that cannot be used (a regex that does not compile, an empty path, a folder that does not
exist) keeps the dialog open with the reason under the input and the text as typed, to be corrected
rather than retyped. A live prompt (the table filter) hands each pause in the typing to `live`,
which applies it to the rows behind and answers its problem, shown at once; `up`/`down` recall the
answers given before (`history`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Label

from ....core.common import display_text

# check(text) -> None when the answer can be used, else the reason it cannot (shown in the dialog).
Check = Callable[[str], str | None]
# Seconds of no typing before `live` runs: a burst of keys (`time > 5us` pasted, or typed fast)
# filters once. Well under the time a person takes between keys; the filter itself takes < 100 ms at
# 100k rows (benchmarks/bench_filter.py).
LIVE_PAUSE_S = 0.06


class PromptScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel"),
        Binding("up", "recall(-1)", "Older", show=False, id="prompt.older"),
        Binding("down", "recall(1)", "Newer", show=False, id="prompt.newer"),
    ]
    DEFAULT_CSS = """
    PromptScreen #prompt-error { text-style: bold; color: $text-error; display: none; }
    PromptScreen #prompt-error.shown { display: block; }
    """

    def __init__(
        self,
        question: str,
        value: str = "",
        hint: str = "",
        check: Check | None = None,
        *,
        live: Check | None = None,
        history: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.hint = hint
        self.check = check
        self.live = live  # applies the text as typed, and says why it cannot (None: applied)
        # oldest first; the caller's list, kept
        self.history = history if history is not None else []
        self.recalled = len(self.history)  # the history's entry shown; len: the text being typed
        self.draft = value  # the text being typed, while older ones are recalled
        self.error = ""  # the reason shown under the input, if any
        self._pause: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Label(self.question, markup=False)
            yield Input(self.value, id="answer")
            # Bold, not colour only: legible over SSH and with NO_COLOR. A Label wraps; a long path
            # folds.
            yield Label("", id="prompt-error", markup=False)
            yield Label(self.hint or "enter: OK · escape: cancel", classes="hint", markup=False)

    def on_mount(self) -> None:
        # Focus now, not when the screen is resumed: keys typed right after the one that opened the
        # prompt (a burst over SSH: `/gemm`) arrive before that, and would find nothing focused and
        # be lost.
        self.query_one(Input).focus()
        if self.live is not None:  # at the bottom: the rows it filters stay in sight above it
            self.styles.align = ("center", "bottom")

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

    def on_input_changed(self, event: Input.Changed) -> None:
        self.show_error(None)  # the text changed: the old reason may no longer hold
        if self.live is not None:
            if self._pause is not None:
                self._pause.stop()
            self._pause = self.set_timer(LIVE_PAUSE_S, lambda: self._apply_live(event.value))

    def _apply_live(self, text: str) -> None:
        assert self.live is not None  # the timer is set only for a live prompt
        if self.is_attached:  # not once dismissed
            self.show_error(self.live(text))

    def action_recall(self, step: int) -> None:
        """`up`: the answer before the one shown; `down`: the next, and after the newest the text
        being typed."""
        at = min(max(self.recalled + step, 0), len(self.history))
        if at == self.recalled:
            return
        answer = self.query_one(Input)
        if self.recalled == len(self.history):
            self.draft = answer.value
        self.recalled = at
        answer.value = self.history[at] if at < len(self.history) else self.draft
        answer.cursor_position = len(answer.value)

    def submit(self, value: str) -> None:
        """A usable answer: close with it (and keep it for `up`, the newest last, once)."""
        if self._pause is not None:
            self._pause.stop()
        if value.strip():
            if value in self.history:
                self.history.remove(value)
            self.history.append(value)
            del self.history[:-50]
        self.dismiss(value)

    def action_cancel(self) -> None:
        if self._pause is not None:
            self._pause.stop()
        self.dismiss(None)
