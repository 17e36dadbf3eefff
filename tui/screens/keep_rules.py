"""The session's keep rules (``/keep`` alone): one row each; Alt+D removes one after asking.

A rule's text is the user's own: shown inert, never as markup. Plain keys are typing, and go to
the composer; Esc closes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.screens.dialogs import ConfirmScreen
from tui.typing import TypingPassesThrough

if TYPE_CHECKING:
    from engine.curation.keep_rules import KeepRule

EMPTY = "No keep rules in this session. Add one with /keep and what must survive."
RemoveRule = Callable[[int], Awaitable[Sequence["KeepRule"]]]
"""Removes a rule by id; the rules left."""


class KeepRulesScreen(TypingPassesThrough, Dialog[None]):
    """Lists the session's keep rules, oldest first; Alt+D removes the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="keep_close"),
        Binding("alt+d,delete", "remove", "Remove", id="keep_remove", tooltip="Remove the keep rule"),
    ]

    def __init__(self, rules: Sequence[KeepRule], remove: RemoveRule) -> None:
        super().__init__()
        self.rules = list(rules)
        self._remove_rule = remove

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog keep-rules"):
            yield Static(Content("Keep rules"), classes="title")
            yield Static(
                Content(
                    "Messages that match a rule are kept verbatim while they fit, the rule their reason."
                ),
                classes="intro",
            )
            yield OptionList(id="keep-rules")
            yield Static(Content("Alt+D removes · Esc closes"), classes="hint")

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        if not self.rules:
            options.add_option(Option(Content(EMPTY), disabled=True))
            return
        options.add_options(Option(Content(inert(r.text)), id=str(r.id)) for r in self.rules)
        options.highlighted = min(keep or 0, len(self.rules) - 1)
        options.focus()

    def selected(self) -> KeepRule | None:
        """The highlighted rule, if any."""
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.rules):
            return None
        return self.rules[index]

    def action_remove(self) -> None:
        rule = self.selected()
        if rule is None:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._take_out(rule.id)

        text = rule.text if len(rule.text) <= 120 else rule.text[:119] + "…"
        question = f"Remove this keep rule?\n“{text}”\nWhat it kept is curated as usual from now on."
        self.app.push_screen(ConfirmScreen(question, confirm="Remove", danger=True), confirmed)

    @work(exclusive=True, group="keep-rule-change")
    async def _take_out(self, rule_id: int) -> None:
        self.rules = list(await self._remove_rule(rule_id))
        self._show()
        self.notify("Keep rule removed.")
