"""Domain types of a conversation: sessions, stored messages and prompt messages.

These are plain frozen dataclasses so that the engine, the store and the UI can pass them around
without sharing any mutable state; an update to a message produces a new object.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from engine.text import thinking

Role = Literal["system", "user", "assistant", "tool"]
"""Who wrote a message; the same names as the chat-completions protocol."""

ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


class MessageStatus(enum.StrEnum):
    """Where a stored message is in its life.

    A user message is ``complete`` from the moment it is stored. An assistant reply starts as
    ``streaming`` and ends as ``complete``, ``interrupted`` (some text arrived, then the stream was
    stopped or cut) or ``failed`` (nothing arrived). Retrying a turn marks its earlier replies
    ``superseded``: they stay in the store but are neither shown nor sent again.
    """

    COMPLETE = "complete"
    STREAMING = "streaming"
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    SUPERSEDED = "superseded"


@dataclass(frozen=True, slots=True)
class Session:
    """A conversation."""

    id: int
    title: str
    """Taken from the first user message; the user may rename it."""
    created_at: datetime
    updated_at: datetime
    message_count: int = 0
    """The messages the chat shows (see :func:`counted`): the one count the list, the sessions
    screen and exports all give."""


def counted(status: MessageStatus) -> bool:
    """Whether a message counts among a session's messages: every one but superseded replies
    (retried, edited or deleted away), which stay in the store but are neither shown nor sent."""
    return status is not MessageStatus.SUPERSEDED


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """A session's own settings; None means "as the config says"."""

    system_prompt: str | None = None
    model: str | None = None
    profile: str | None = None
    temperature: float | None = None


OFFLINE_MODEL = "offline"
"""The name of the built-in offline model (``providers.offline``) and of the replies it writes."""


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as it is kept in the store."""

    id: int
    session_id: int
    role: Role
    content: str
    status: MessageStatus
    created_at: datetime
    tokens: int | None = None
    """Token count of ``content`` (None until counted)."""
    model: str | None = None
    """For replies: the model that wrote it."""
    error: str | None = None
    """For failed or interrupted replies: what went wrong, in words for the user."""

    @property
    def is_reply(self) -> bool:
        return self.role == "assistant"

    @property
    def sent_text(self) -> str:
        """What the model is sent of it: a reply without a reasoning model's thinking."""
        return thinking.sent_text(self.role, self.content)

    @property
    def is_digest(self) -> bool:
        """A reply of the built-in offline model: a digest of what it was sent (counts, a quote,
        how to connect a model), which names nothing of the conversation's own."""
        return self.role == "assistant" and self.model == OFFLINE_MODEL


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a request to the model."""

    role: Role
    content: str

    def as_openai(self) -> dict[str, str]:
        # Heedful's tool items (attached files, tool output in transcripts) answer no tool call,
        # and chat-completions servers refuse a "tool" message without a tool_call_id.
        role = "user" if self.role == "tool" else self.role
        return {"role": role, "content": self.content}


@dataclass(frozen=True, slots=True)
class HistoryCut:
    """Where a long session's curated part begins: the messages after :attr:`after` are curated
    (at most :attr:`kept` of them), the ones up to it only stored."""

    after: int
    """The id of the last message left uncurated."""
    earlier: int
    """How many shown messages are left uncurated."""
    earlier_turns: int
    """The user turns among them: the curated part's turns are numbered on from there."""
    kept: int
    """The most messages curated."""


@dataclass(frozen=True, slots=True)
class BuildProgress:
    """How far a long session's curation, read its latest messages first, has got."""

    read: int
    """The latest messages read so far: a request meanwhile is planned from these."""
    total: int
    """The messages the whole curation will hold."""


@dataclass(frozen=True, slots=True)
class MessagePage:
    """A run of a session's shown messages (superseded ones are not shown), oldest first."""

    messages: list[StoredMessage]
    earlier: int
    """How many shown messages come before the page."""
    later: int
    """How many come after it."""
