"""The multi-line message composer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = frozenset({"ctrl+j", "alt+enter", "shift+enter", "newline"})
"""Keys that insert a line break; Enter itself sends. Terminals report ctrl+j as a newline."""


class Composer(TextArea):
    """Where the user writes. Enter sends; ctrl+j or alt+enter inserts a newline; pastes keep theirs."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Shown in the footer; the key itself is handled in _on_key before bindings are consulted.
        Binding("enter", "submit", "Send", key_display="⏎", tooltip="Send the message", id="send"),
        Binding("ctrl+j", "newline", "New line", show=False, tooltip="Insert a line break", id="newline"),
    ]

    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 12;
    }
    """

    @dataclass
    class Submitted(Message):
        """The user pressed Enter with some text in the composer."""

        composer: Composer
        text: str

        @property
        def control(self) -> Composer:
            return self.composer

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(
            "",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Message  (Enter sends · Ctrl+J new line)",
            id=id,
            classes=classes,
        )

    async def _on_key(self, event: events.Key) -> None:
        # Textual runs _on_key of every class in the MRO unless the default is prevented, so
        # handling Enter here is what stops TextArea from inserting a newline for it.
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()

    def action_newline(self) -> None:
        start, end = self.selection
        self.replace("\n", start, end, maintain_selection_offset=False)

    def action_submit(self) -> None:
        if self.text.strip():
            self.post_message(self.Submitted(self, self.text))
