"""The base of the dialogs that show the next request (F5's preview, /tokens): a title, a line of
its figures, what the dialog shows of it, and how to close it."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough
from tui.widgets.request_picture import approximate

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView


class RequestDialog(TypingPassesThrough, Dialog[None]):
    """A dialog over the next request's ``view``; ``exact`` says whether its counts are the model's own."""

    TITLE_TEXT: ClassVar[str] = ""

    def __init__(self, view: ContextView, *, exact: bool) -> None:
        super().__init__()
        self.view = view
        self.exact = exact

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.TITLE_TEXT, "bold"), classes="title")
            yield Static(Content(self.figures(approximate(self.exact))))
            yield from self.parts()
            yield Static(Content("Esc closes"), classes="hint")

    def figures(self, approx: str) -> str:
        """The line under the title: the request's tokens, budget and window (``approx`` marks estimates)."""
        raise NotImplementedError

    def parts(self) -> ComposeResult:
        """What the dialog shows of the request, between that line and the hint."""
        raise NotImplementedError
