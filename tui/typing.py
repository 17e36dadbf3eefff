"""Typing is always typing: which keys are the user's words, and how they reach the composer.

A printable key pressed where it means nothing (the context panel, a focused message, a dialog
over the chat) is the user writing: it goes to the chat's composer, never to a choice. Actions
take Alt+letter, Enter, Esc or a function key, none of which is typing.
"""

from __future__ import annotations

from textual import events
from textual._time import get_time
from textual.app import App
from textual.screen import Screen
from textual.widgets import Input, TextArea

from tui.widgets.composer import Composer

MODIFIERS = ("alt+", "ctrl+", "super+", "meta+", "hyper+")
"""A key name holding one of these is a chord: a terminal reports Alt+p as "alt+p" with "p"."""


def typed(event: events.Key) -> str | None:
    """The character the key types, or None (a chord, Enter, Tab, Esc, a function key)."""
    if not event.is_printable or any(modifier in event.key for modifier in MODIFIERS):
        return None
    return event.character


def takes_typing(widget: object) -> bool:
    """Whether ``widget`` is somewhere the user writes (a field, an editable text area)."""
    return isinstance(widget, Input) or (isinstance(widget, TextArea) and not widget.read_only)


def chat_composer(app: App[object]) -> Composer | None:
    """The composer of the chat screen under the dialogs, if there is one."""
    for screen in reversed(app.screen_stack):
        composer = getattr(screen, "composer", None)
        if isinstance(composer, Composer):
            return composer
    return None


def pass_to_composer(app: App[object], event: events.Key, focused: object) -> bool:
    """Hand a typed character to the chat's composer (True) unless the focus takes typing itself."""
    character = typed(event)
    if character is None or takes_typing(focused):
        return False
    composer = chat_composer(app)
    if composer is None:
        return False
    event.stop()
    event.prevent_default()
    composer.take(character)
    return True


def paste_to_composer(app: App[object], event: events.Paste, focused: object) -> bool:
    """Hand a paste to the chat's composer (True) unless the focus takes typing itself."""
    composer = chat_composer(app)
    if composer is None or takes_typing(focused):
        return False
    event.stop()
    event.prevent_default()
    composer.post_message(events.Paste(event.text))
    return True


class TypingPassesThrough:
    """For a dialog over the chat: its printable keys (and pastes) are the user's next words."""

    def on_key(self, event: events.Key) -> None:
        assert isinstance(self, Screen)
        pass_to_composer(self.app, event, self.focused)

    def on_paste(self, event: events.Paste) -> None:
        assert isinstance(self, Screen)
        paste_to_composer(self.app, event, self.focused)


class AskedOnScreen:
    """For a question over the chat: a key typed before it was on screen never answers it (the
    user meant it for what was there), and printable keys are the user's next words."""

    shown_at: float | None = None
    """When the dialog was first drawn (Textual's event clock); None until then."""

    def on_mount(self) -> None:
        assert isinstance(self, Screen)
        self.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        self.shown_at = get_time()

    def on_paste(self, event: events.Paste) -> None:
        assert isinstance(self, Screen)
        paste_to_composer(self.app, event, self.focused)

    typed_through = False
    """Whether the user typed into the composer while this question was up: they are writing."""

    def on_key(self, event: events.Key) -> None:
        assert isinstance(self, Screen)
        if pass_to_composer(self.app, event, self.focused):
            self.typed_through = True
            return
        if self.shown_at is None or event.time < self.shown_at:
            event.stop()
            event.prevent_default()
