"""The chat screen's keys (its own: a focused message and the context panel have theirs). Kept
apart from the screen so the key help (tui/keys.py) lists them without importing the screen."""

from __future__ import annotations

from textual.binding import Binding, BindingType

CHAT_BINDINGS: list[BindingType] = [
    Binding("escape", "stop", "Stop", tooltip="Stop the reply that is streaming", id="stop"),
    Binding("ctrl+r", "retry", "Retry", tooltip="Ask for the last reply again", id="retry"),
    Binding(
        "ctrl+g",
        "continue_reply",
        "Continue",
        show=False,
        tooltip="Continue a reply that was cut off, where it stopped",
        id="continue_reply",
    ),
    Binding("ctrl+n", "new_session", "New", tooltip="Start a new session", id="new_session"),
    Binding("ctrl+o", "sessions", "Sessions", tooltip="Open, rename or delete sessions", id="sessions"),
    Binding("alt+c", "copy_reply", "Copy", tooltip="Copy the last reply", id="copy_reply"),
    Binding("f2", "toggle_context", "Context", tooltip="Show or hide the context panel", id="toggle_context"),
    Binding(
        "f4",
        "consent",
        "Consent",
        tooltip="Answer Heedful's request to summarize or remove your older messages",
        id="consent",
    ),
    Binding("f5", "preview", "Preview", tooltip="Show exactly what the next request sends", id="preview"),
    Binding("f6", "ledger", "Ledger", tooltip="The session's forgetting log, with restore", id="ledger"),
    Binding("f3", "connect", "Connect", tooltip="How to connect a model", id="connect"),
    Binding("f1", "help", "Help", tooltip="Keys and help", id="help"),
    Binding(
        "tab",
        "cycle_focus(1)",
        "Next area",
        show=False,
        tooltip="Move to the next area: composer, context panel, conversation",
        id="focus_next",
    ),
    Binding(
        "shift+tab",
        "cycle_focus(-1)",
        "Previous area",
        show=False,
        tooltip="Move to the previous area: composer, context panel, conversation",
        id="focus_previous",
    ),
    Binding(
        "ctrl+home",
        "first_message",
        "First message",
        show=False,
        tooltip="Show the session from its first message",
        id="first_message",
    ),
    Binding(
        "ctrl+end",
        "latest_message",
        "Latest message",
        show=False,
        tooltip="Show the session's latest messages",
        id="latest_message",
    ),
]
