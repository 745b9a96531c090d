"""`/` on a screen whose rows a TableModel filters (the tables, the sweep's points, the module
tree): the prompt is live (the rows follow the text as it is typed; a pause in the typing applies
it), a problem shows under it at once with its position, escape puts back the filter it opened on,
`up`/`down` recall the filters given (the app's, kept across restarts); escape on the screen clears
a filter first, then goes back.

One copy, so that every filtered screen reads and answers alike. A screen gives `model` (None while
its rows load), `query_state` and `_requery(query)`, which shows the rows of a query."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, cast

from textual.screen import Screen

from ...presentation.table_model import Query, TableModel, filter_problem, parse_filter
from .back import can_go_back
from .prompt import PromptScreen

if TYPE_CHECKING:
    from ..app import FlopscopeApp


class LiveFilter(Screen):
    FILTER_QUESTION = "Filter rows:"
    FILTER_HINT = (
        "regex on the name, any case, or an expression over the columns (time > 5us) · ↑↓ recent ·"
        " empty: all"
    )
    NO_BOUND = ""  # why `bound:` cannot filter these rows, where they have no bound

    model: TableModel | None
    query_state: Query

    def _requery(self, query: Query, top: bool = False) -> None:
        raise NotImplementedError

    @property
    def filtered(self) -> bool:
        return self.query_state.filtered

    async def action_filter(self) -> None:
        # Also while the rows load: the filter typed then applies to them (`_requery` keeps it).
        before = self.query_state

        def problem(text: str) -> str | None:
            return filter_problem(text, before, self.NO_BOUND, self.model)

        def live(text: str) -> str | None:
            reason = problem(text)
            if reason is None:
                self._requery(parse_filter(text, before, self._names()))
            return reason

        def typed(text: str | None) -> None:
            self._requery(before if text is None else parse_filter(text, before, self._names()))
            if text is not None:
                # the prompt added it: kept for the next app
                cast("FlopscopeApp", self.app).remember_filters()

        prompt = PromptScreen(
            self.FILTER_QUESTION,
            before.text(),
            self.FILTER_HINT,
            problem,
            live=live,
            history=self._recent_filters(),
        )
        await self.app.push_screen(prompt, typed)

    def _names(self) -> dict[str, str] | None:
        """What an expression may call the columns (None while the rows load: the text is a name
        pattern)."""
        return self.model.names if self.model is not None else None

    def _recent_filters(self) -> list[str]:
        """The filters given, oldest first (`up` in the prompt recalls them), shared by the app's
        tables and kept across restarts (filter_history.py)."""
        return cast("FlopscopeApp", self.app).recent_filters

    def action_clear_filter(self) -> None:
        if self.filtered:
            self._requery(dataclasses.replace(self.query_state, pattern="", where="", bound="all"))

    # -- escape, where it is bound to `back` ------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # escape clears a filter first
            return self.filtered or can_go_back(self)
        return True

    def action_back(self) -> None:
        if self.filtered:
            self.action_clear_filter()  # a second escape goes back
        elif can_go_back(self):
            self.dismiss()
