"""The session's keep rules (``/keep`` alone): one row each; Alt+D removes one after asking.

A rule's text is the user's own: shown inert, never as markup. Plain keys are typing, and go to
the composer; Esc closes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets.option_list import Option

from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.list_dialog import ListDialog

if TYPE_CHECKING:
    from engine.curation.keep_rules import KeepRule

RemoveRule = Callable[[int], Awaitable[Sequence["KeepRule"]]]
"""Removes a rule by id; the rules left."""


class KeepRulesScreen(ListDialog["KeepRule"]):
    """Lists the session's keep rules, oldest first; Alt+D removes the highlighted one."""

    EMPTY = "No keep rules in this session. Add one with /keep and what must survive."
    HEADING = "Keep rules"
    INTRO = "Messages that match a rule are kept verbatim while they fit, the rule their reason."
    KEYS_HINT = "Alt+D removes · Esc closes"
    LIST_ID = "keep-rules"
    BOX_CLASSES = "dialog keep-rules"
    WHAT = "keep rule"
    AFTER_REMOVAL = "What it kept is curated as usual from now on."
    BINDINGS: ClassVar[list[BindingType]] = [
        closing(name="keep_close"),
        Binding("alt+d,delete", "remove", "Remove", id="keep_remove", tooltip="Remove the keep rule"),
    ]

    def __init__(self, rules: Sequence[KeepRule], remove: RemoveRule) -> None:
        super().__init__(rules)
        self._remove_rule = remove

    def option(self, item: KeepRule) -> Option:
        return Option(Content(inert(item.text)), id=str(item.id))

    def words(self, item: KeepRule) -> str:
        return item.text

    def remove_item(self, item: KeepRule) -> None:
        self._take_out(item.id)

    @work(exclusive=True, group="keep-rule-change")
    async def _take_out(self, rule_id: int) -> None:
        self.show(await self._remove_rule(rule_id))
        self.notify("Keep rule removed.")
