"""The base of every dialog over the chat: it is answered once.

Textual's ``dismiss`` pops whichever screen is on top; a dialog answered twice in one frame (an
Enter seen by a button and a binding) popped the chat screen under it with the second answer.
"""

from __future__ import annotations

from typing import TypeVar

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen

Result = TypeVar("Result")


class Dialog(ModalScreen[Result]):
    """A modal screen whose first answer closes it; later ones, and any given while another screen
    is over it, are ignored."""

    CSS_PATH = "dialogs.tcss"
    """The dialogs' stylesheet, beside each subclass in tui/screens/ (a dialog with its own names it)."""

    _answered = False

    @property
    def is_answered(self) -> bool:
        return self._answered

    def focus_default(self, selector: str) -> None:
        """Focus the part ``selector`` names (the safe answer), if the dialog still holds it: one
        answered before it was mounted (Enter typed as it opened) holds nothing any more."""
        for widget in self.query(selector):
            widget.focus()
            return

    def dismiss(self, result: Result | None = None) -> AwaitComplete:
        if self._answered or self.app.screen is not self:
            return AwaitComplete()  # nothing to wait for
        self._answered = True
        return super().dismiss(result)
