"""What the chat screen says: its welcome, the countdown before a retry, a failed request's notice."""

from __future__ import annotations

from textual.content import Content

from engine.errors import ModelError, ModelErrorKind, StoreError

_WAIT_REASONS = {
    ModelErrorKind.RATE_LIMIT: "The server is limiting requests (429)",
    ModelErrorKind.SERVER: "The server failed",
    ModelErrorKind.CONNECTION: "Could not connect to the server",
    ModelErrorKind.TIMEOUT: "Could not connect to the server in time",
}

_FAILURE_TITLES = {
    ModelErrorKind.AUTH: "API key refused",
    ModelErrorKind.RATE_LIMIT: "Rate limited",
    ModelErrorKind.CONTEXT_LENGTH: "Too long for the model",
    ModelErrorKind.TIMEOUT: "The model did not answer in time",
    ModelErrorKind.CONNECTION: "Connection problem",
}


def welcome_text(offline: bool) -> Content:
    lines = [
        "Welcome to Heedful.",
        "",
        "Type a message below and press Enter. Ctrl+J starts a new line. "
        "The panel on the right (F2) shows what the model will be sent.",
    ]
    if offline:
        lines += [
            "",
            "No model is connected: replies come from the built-in offline model, which answers with a "
            "digest of what it received. F3 shows how to connect one.",
        ]
    return Content("\n".join(lines))


def wait_reason(kind: ModelErrorKind) -> str:
    """What the countdown to an automatic retry says (the full message is shown if it fails for good)."""
    return _WAIT_REASONS.get(kind, "The request failed")


def failure_notice(error: ModelError, *, kept: bool) -> tuple[str, str]:
    """The title and text of the notice for a failed request; ``kept``: part of the reply arrived."""
    follow_up = (
        " The partial reply is kept: Ctrl+G continues it, Ctrl+R asks again." if kept else " Ctrl+R retries."
    )
    return _FAILURE_TITLES.get(error.kind, "The request failed"), f"{error.user_message}{follow_up}"


def unplanned_failure(error: BaseException | None) -> tuple[str, str]:
    """The title and text of the notice for a failure nobody planned for (never a traceback)."""
    if isinstance(error, StoreError):
        return "Could not save", error.user_message
    return "Something went wrong", f"{type(error).__name__}: {error}. Your message is kept; Ctrl+R retries."
