"""A dialog that lists items one row each (keep rules, standing instructions, memories): the
highlighted row stays put as the list changes, and a removal is asked about first, the item quoted.

Plain keys are typing, and go to the composer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Generic, TypeVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.screens.dialog import Dialog
from tui.screens.dialogs import ConfirmScreen
from tui.typing import TypingPassesThrough

Item = TypeVar("Item")
QUOTED_CHARS = 120
"""A removal's question quotes the item's text up to this many characters."""


class ListDialog(TypingPassesThrough, Dialog[None], Generic[Item]):
    """Lists :attr:`items` in its option list, one :meth:`option` each, or :attr:`EMPTY` when
    there are none; above the list a heading and an intro, below it the keys."""

    EMPTY: ClassVar[str] = ""
    HEADING: ClassVar[str] = ""
    INTRO: ClassVar[str] = ""
    KEYS_HINT: ClassVar[str] = ""
    LIST_ID: ClassVar[str] = ""
    BOX_CLASSES: ClassVar[str] = "dialog"
    VERB: ClassVar[str] = "Remove"
    """The word for a removal, in the question and on its button ("Delete")."""
    WHAT: ClassVar[str] = ""
    """What an item is called in the question before its removal ("keep rule")."""
    AFTER_REMOVAL: ClassVar[str] = ""
    """What removing one means, said under its text in that question."""

    def __init__(self, items: Sequence[Item] | None) -> None:
        """``items`` to list once mounted; None when the subclass fetches them and calls :meth:`show`."""
        super().__init__()
        self.items = list(items or ())
        self._given = items is not None

    def compose(self) -> ComposeResult:
        with Vertical(classes=self.BOX_CLASSES):
            yield Static(Content(self.HEADING), classes="title")
            yield Static(Content(self.INTRO), classes="intro")
            yield OptionList(id=self.LIST_ID)
            yield Static(Content(self.KEYS_HINT), classes="hint")

    def option(self, item: Item) -> Option:
        """The row that shows ``item``."""
        raise NotImplementedError

    def words(self, item: Item) -> str:
        """The item's text, as the question before its removal quotes it."""
        raise NotImplementedError

    def on_mount(self) -> None:
        if self._given:
            self.show(self.items)

    def show(self, items: Sequence[Item], highlight: int | None = None) -> None:
        """Lists ``items``, the row at ``highlight`` highlighted, else the same row as before where
        there is one."""
        self.items = list(items)
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        if not self.items:
            options.add_option(Option(Content(self.EMPTY), disabled=True))
            return
        options.add_options(self.option(item) for item in self.items)
        options.highlighted = highlight if highlight is not None else min(keep or 0, len(self.items) - 1)
        options.focus()

    def selected(self) -> Item | None:
        """The highlighted item, if any."""
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.items):
            return None
        return self.items[index]

    def remove_item(self, item: Item) -> None:
        """Removes ``item``, the user having agreed."""
        raise NotImplementedError

    def action_remove(self) -> None:
        """Asks "Remove this :attr:`WHAT`?", quoting the highlighted item; :meth:`remove_item` on yes."""
        item = self.selected()
        if item is None:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.remove_item(item)

        text = self.words(item)
        quoted = text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
        question = f"{self.VERB} this {self.WHAT}?\n“{quoted}”\n{self.AFTER_REMOVAL}"
        self.app.push_screen(ConfirmScreen(question, confirm=self.VERB, danger=True), confirmed)
