"""Small modal dialogs: confirm an action, enter a line of text."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Static

from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough


class ConfirmScreen(TypingPassesThrough, Dialog[bool]):
    """Ask a yes/no question; Escape means no, and a plain key is typing (it goes to the composer)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(False)", "Cancel", id="dialog_cancel"),
        Binding("alt+y", "dismiss(True)", "Yes", show=False),
        Binding("alt+n", "dismiss(False)", "No", show=False),
    ]

    def __init__(self, question: str, *, confirm: str = "Yes", danger: bool = False) -> None:
        super().__init__()
        self.question = question
        self.confirm_label = confirm
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(inert(self.question)), classes="question")
            with Horizontal(classes="buttons"):
                yield Button(
                    f"{self.confirm_label} (Alt+Y)",
                    variant="error" if self.danger else "primary",
                    id="confirm",
                )
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.focus_default("#cancel" if self.danger else "#confirm")

    @on(Button.Pressed)
    def answered(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")


class TextPromptScreen(Dialog[str | None]):
    """Ask for one line of text (a new title, say); Escape cancels. Subclasses say what the text
    is for through :attr:`MAX_LENGTH` and :meth:`problem`."""

    BINDINGS: ClassVar[list[BindingType]] = [closing(description="Cancel")]
    MAX_LENGTH = 200
    """Characters the field takes (0: any, for a subclass that explains a limit in :meth:`problem`)."""

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(self.prompt), classes="question")
            yield Input(inert(self.value), select_on_focus=True, max_length=self.MAX_LENGTH)
            yield Static(Content("Enter saves · Esc cancels"), classes="hint")

    def problem(self, value: str) -> str | None:
        """Why ``value`` (its spaces collapsed) cannot be saved, or None."""
        return "A title cannot be empty." if not value else None

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        value = " ".join(event.value.split())
        problem = self.problem(value)
        if problem is not None:
            self.notify(problem, severity="warning")
            return
        self.dismiss(value)
