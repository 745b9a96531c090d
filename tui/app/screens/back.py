"""`escape` goes back: only where there is a screen of the app's own to go back to."""

from __future__ import annotations

from textual.screen import Screen


def can_go_back(screen: Screen) -> bool:
    """True when a screen of the app's own lies beneath `screen` (not Textual's blank default
    screen): the same screen can be an app's first (diff, sweep) or pushed from another (the Runs
    screen)."""
    stack = screen.app.screen_stack
    below = stack[stack.index(screen) - 1] if screen in stack and stack.index(screen) > 0 else None
    return below is not None and below.id != "_default"


class BackScreen(Screen):
    """A screen that is an app's first (`flopscope diff`, `flopscope sweep`) or pushed from another
    (the Runs screen): its `back` action, bound by the subclass, shows and works only when there is
    somewhere to go."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return can_go_back(self) if action == "back" else True

    def action_back(self) -> None:
        if can_go_back(self):
            self.dismiss()
