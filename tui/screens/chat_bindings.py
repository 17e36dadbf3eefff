"""The chat screen's keys (its own: a focused message and the context panel have theirs). Kept
apart from the screen so the key help (tui/keys.py) lists them without importing the screen."""

from __future__ import annotations

from textual.binding import BindingType

from tui.bindings import key

CHAT_BINDINGS: list[BindingType] = [
    key("escape", "stop", "Stop", "Stop the reply that is streaming"),
    key("ctrl+r", "retry", "Retry", "Ask for the last reply again"),
    key(
        "ctrl+g",
        "continue_reply",
        "Continue",
        "Continue a reply that was cut off, where it stopped",
        show=False,
    ),
    key("ctrl+n", "new_session", "New", "Start a new session"),
    key("ctrl+o", "sessions", "Sessions", "Open, rename or delete sessions"),
    key("alt+c", "copy_reply", "Copy", "Copy the last reply"),
    key("f2", "toggle_context", "Context", "Show or hide the context panel"),
    key("f4", "consent", "Consent", "Answer Heedful's request to summarize or remove your older messages"),
    key("f5", "preview", "Preview", "Show exactly what the next request sends"),
    key("f6", "ledger", "Ledger", "The session's forgetting log, with restore"),
    key("f3", "connect", "Connect", "How to connect a model"),
    key("f1", "help", "Help", "Keys and help"),
    key(
        "tab",
        "cycle_focus(1)",
        "Next area",
        "Move to the next area: composer, context panel, conversation",
        name="focus_next",
        show=False,
    ),
    key(
        "shift+tab",
        "cycle_focus(-1)",
        "Previous area",
        "Move to the previous area: composer, context panel, conversation",
        name="focus_previous",
        show=False,
    ),
    key("ctrl+home", "first_message", "First message", "Show the session from its first message", show=False),
    key("ctrl+end", "latest_message", "Latest message", "Show the session's latest messages", show=False),
]
