"""Exceptions raised by the engine and by the adapters that implement its protocols.

Hierarchy::

    EngineError
    ├── ModelError      a request to the model failed (kind says how; message is for the user)
    └── StoreError      the store could not read or write

Adapters translate their library's exceptions into these, so the engine and the UI never import
``openai`` or ``sqlite3`` to decide what to tell the user.
"""

from __future__ import annotations

import enum

from engine.text.redaction import redact


class EngineError(Exception):
    """Root of the engine's exceptions."""


class ModelErrorKind(enum.StrEnum):
    """How a request to the model failed; decides what the UI offers next."""

    AUTH = "auth"
    """The key was refused (401/403)."""
    RATE_LIMIT = "rate_limit"
    """Too many requests (429), even after the client's own retries."""
    SERVER = "server"
    """The server failed (5xx) or sent an error in the stream."""
    TIMEOUT = "timeout"
    """No answer (or no next token) within the configured timeout."""
    CONNECTION = "connection"
    """The server could not be reached, or the connection dropped mid-reply."""
    CONTEXT_LENGTH = "context_length"
    """The prompt is larger than the model's window."""
    CUT = "cut"
    """The stream ended before the model said it had finished."""
    BAD_REQUEST = "bad_request"
    """The server refused the request for another reason (400, 404, 422, ...)."""
    BAD_RESPONSE = "bad_response"
    """The server's answer could not be understood."""


class ModelError(EngineError):
    """A request to the model failed.

    Attributes:
        kind: How it failed.
        user_message: One or two sentences for the user: what happened and what to do. It is
            stored, shown and exported, so it goes through :func:`engine.text.redaction.redact`.
        retry_after: Seconds the server asked us to wait, when it said.
        retryable: Whether asking again unchanged may well succeed (a 429, a 5xx, a refused
            connection), so the engine retries by itself after a visible wait.
        window: For ``CONTEXT_LENGTH``: the context window the server said the model has, if it
            said.
    """

    def __init__(
        self,
        kind: ModelErrorKind,
        user_message: str,
        *,
        retry_after: float | None = None,
        retryable: bool = False,
        window: int | None = None,
    ) -> None:
        user_message = redact(user_message)
        super().__init__(user_message)
        self.kind = kind
        self.user_message = user_message
        self.retry_after = retry_after
        self.retryable = retryable
        self.window = window


class StoreError(EngineError):
    """The store could not read or write; ``user_message`` says what and where."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message
