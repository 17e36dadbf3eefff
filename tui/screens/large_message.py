"""Sending a large message: keep it whole, let Heedful summarize it when room is short, or send it
once. Asked when the user sends it, the moment they expect a question about it; Enter keeps it
whole, Esc keeps it in the composer unsent, and the other answers take an Alt+letter."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static

from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.typing import AskedOnScreen

LargeChoice = Literal["keep", "summarize", "once"]
BUTTONS: dict[str, LargeChoice] = {"large-keep": "keep", "large-summarize": "summarize", "large-once": "once"}


class LargeMessageScreen(AskedOnScreen, Dialog[LargeChoice | None]):
    """Dismissed with how to send the message, or None (Esc: not sent, still in the composer)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        closing(description="Cancel"),
        Binding("alt+s", "dismiss('summarize')", "Summarize when short", id="large_summarize"),
        Binding("alt+o", "dismiss('once')", "Send once", id="large_once"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled("A large message", "bold"), classes="title")
            yield Static(Content(inert(self.question)), classes="question")
            yield Static(
                Content("Typing goes on in the composer; Esc keeps this message there, unsent."),
                classes="hint",
            )
            with Horizontal(classes="buttons"):
                yield Button("Keep whole (Enter)", variant="primary", id="large-keep")
                yield Button("Summarize if short (Alt+S)", id="large-summarize")
                yield Button("Send once (Alt+O)", id="large-once")

    def on_mount(self) -> None:
        self.focus_default("#large-keep")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = BUTTONS.get(event.button.id or "")
        if choice is not None:
            self.dismiss(choice)


def large_question(tokens: int, size: str, *, budget: int, window: int, model: str) -> str:
    """What the dialog says about a message of ``tokens`` tokens (``size``: its lines and bytes)."""
    said = (
        f"This message is {tokens:,} tokens: keep it whole, let Heedful summarize it when room is "
        f"short, or send it once (then Heedful asks what to do with it). It is {size}."
    )
    if tokens > budget:  # always, as the screen opens only then; said for the numbers
        said += (
            f"\n\nIt is more than the {budget:,} tokens a request to {model} may hold (its window is "
            f"{window:,}): the model will most likely refuse it or see only part of it."
        )
    return said
