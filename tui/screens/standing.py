"""The session's standing instructions (``/standing``): one row each, current or replaced; Alt+E (or
Enter) edits one in the user's own words, Alt+A adds one, Alt+D removes one after asking.

An instruction's text is the user's own: shown inert, never as markup, and changed only by them.
Plain keys are typing, and go to the composer; Esc closes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.dialogs import TextPromptScreen
from tui.screens.list_dialog import ListDialog

if TYPE_CHECKING:
    from engine.standing.book import Standing

MAX_CHARS = 400
"""Longer ones are kept but not sent every turn (engine.standing.book.MAX_CHARS)."""
ChangeStanding = Callable[[str | None, str | None], Awaitable[Sequence["Standing"]]]
"""Changes one (its key and the user's new words, None to remove), or adds one (key None); the
instructions as they now stand."""

_CSS = """
StandingScreen {
    align: center middle;
    background: $background 60%;
    & > .dialog {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 80%;
        padding: 1 2;
        border: thick $primary;
        background: $surface;
    }
    & .title { text-style: bold; color: $primary; }
    & .intro { color: $heedful-muted; margin-bottom: 1; }
    & OptionList { height: auto; max-height: 16; }
    & .hint { color: $heedful-muted; margin-top: 1; }
}
"""


def row(entry: Standing) -> Content:
    """One instruction's row: current or replaced, its kind, where from, and the user's words."""
    state = "current" if entry.current else "replaced"
    where = f"#{entry.message_id}" if entry.message_id is not None else "by you"
    edited = ", edited" if entry.edit_id is not None and entry.message_id is not None else ""
    long = " (too long to send: Alt+E to shorten)" if entry.too_long else ""
    return Content(f"{state} · {entry.kind.value} · {where}{edited}: {inert(entry.text)}{long}")


class StandingEditScreen(TextPromptScreen):
    """One instruction in the user's own words: Enter saves, Esc cancels."""

    DEFAULT_CSS = _CSS
    MAX_LENGTH = 0  # a longer paste is refused in words, not cut

    def problem(self, value: str) -> str | None:
        if not value:
            return "Say the instruction, or remove it with Alt+D."
        if len(value) > MAX_CHARS:
            return f"Up to {MAX_CHARS} characters: it is sent with every request."
        return None


class StandingScreen(ListDialog["Standing"]):
    """Lists the session's standing instructions in conversation order, the replaced ones too."""

    DEFAULT_CSS = _CSS
    EMPTY = (
        "No standing instructions in this session. Say one (“from now on answer in French”, “I prefer "
        "pytest”, “we decided to use SQLite”) or add one with Alt+A."
    )
    HEADING = "Standing instructions"
    INTRO = (
        "What you said must hold from now on, what you prefer and what you decided. The current ones go "
        "with every request in your words; a replaced one only when you ask about its subject."
    )
    KEYS_HINT = "Alt+E edits · Alt+A adds · Alt+D removes · Esc closes"
    LIST_ID = "standing-list"
    WHAT = "standing instruction"
    AFTER_REMOVAL = "It is not sent from now on."
    BINDINGS: ClassVar[list[BindingType]] = [
        closing(name="standing_close"),
        Binding("alt+e", "edit", "Edit", id="standing_edit", tooltip="Edit the instruction in your words"),
        Binding("alt+a", "add", "Add", id="standing_add", tooltip="Add a standing instruction"),
        Binding("alt+d,delete", "remove", "Remove", id="standing_remove", tooltip="Remove the instruction"),
    ]

    def __init__(self, entries: Sequence[Standing], change: ChangeStanding) -> None:
        super().__init__(entries)
        self._change = change

    def option(self, item: Standing) -> Option:
        return Option(row(item), id=item.key)

    @on(OptionList.OptionSelected, "#standing-list")
    def _selected(self) -> None:
        self.action_edit()

    def action_edit(self) -> None:
        entry = self.selected()
        if entry is None:
            return

        def edited(text: str | None) -> None:
            if text is not None and text != entry.text:
                self._apply(entry.key, text, "Standing instruction changed.")

        self.app.push_screen(StandingEditScreen("Edit the instruction (your words)", entry.text), edited)

    def action_add(self) -> None:
        def added(text: str | None) -> None:
            if text is not None:
                self._apply(None, text, "Standing instruction added.")

        self.app.push_screen(StandingEditScreen("A new standing instruction, in your words"), added)

    def words(self, item: Standing) -> str:
        return item.text

    def remove_item(self, item: Standing) -> None:
        self._apply(item.key, None, "Standing instruction removed.")

    @work(exclusive=True, group="standing-change")
    async def _apply(self, key: str | None, text: str | None, done: str) -> None:
        self.show(await self._change(key, text))
        self.notify(done)
