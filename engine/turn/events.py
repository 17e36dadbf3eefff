"""What a turn reports as it goes (:meth:`engine.turn.service.TurnService.send` and friends yield these):
the app renders them, tests and tools read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.chat import Session, StoredMessage
from engine.errors import ModelError
from engine.protocols.models import UsageReport

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView


@dataclass(frozen=True, slots=True)
class UserMessageSaved:
    """The user's message is safely in the store (and the session exists)."""

    session: Session
    message: StoredMessage


@dataclass(frozen=True, slots=True)
class SessionReloaded:
    """Another Heedful changed the session since this one last looked: the request is planned from
    the store again, and the session's messages should be shown anew (those before ``before``, the
    message this turn just saved, when there is one)."""

    session_id: int
    before: int | None = None


@dataclass(frozen=True, slots=True)
class CuratorAsked:
    """The curator model is being asked what this request needs; the request waits for its
    answer, at most ``timeout`` seconds."""

    model: str
    timeout: float


@dataclass(frozen=True, slots=True)
class ContextCurated:
    """The engine decided what this request sends; ``view`` is what the context panel shows.

    Reported at most once, before the turn's outcome. The view is begun once the model has kept
    the turn waiting ``VIEW_DELAY``, and reported as soon as it is built: before the reply's first
    words as real models answer, among them when it streams at once. A reply whole before then
    goes without it: the preview of the next request follows (see :mod:`engine.turn.pending_view`)."""

    view: ContextView


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    """The request is on its way; ``message`` is the reply's (empty, streaming) row."""

    message: StoredMessage
    superseded: tuple[int, ...] = ()
    """Ids of earlier replies that a retry replaced."""


@dataclass(frozen=True, slots=True)
class ReplyResumed:
    """Continuing an interrupted reply: its text streams on after what ``message`` already holds."""

    message: StoredMessage


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """The request failed in a way worth repeating; the engine asks again after ``delay`` seconds."""

    error: ModelError
    delay: float
    retry: int
    """Which automatic retry this will be (from 1)."""
    retries: int
    """How many automatic retries there are in all."""


@dataclass(frozen=True, slots=True)
class TurnNotice:
    """Something the user should know about this turn that is not a failure (the budget shrank...)."""

    text: str


@dataclass(frozen=True, slots=True)
class ReplyTextArrived:
    text: str


@dataclass(frozen=True, slots=True)
class ReplyCompleted:
    message: StoredMessage
    usage: UsageReport | None


@dataclass(frozen=True, slots=True)
class ReplyFailed:
    """The request failed; ``message`` is the reply row as stored (failed, or interrupted with text)."""

    message: StoredMessage
    error: ModelError


TurnEvent = (
    UserMessageSaved
    | CuratorAsked
    | ContextCurated
    | ReplyStarted
    | ReplyResumed
    | RetryScheduled
    | TurnNotice
    | ReplyTextArrived
    | ReplyCompleted
    | ReplyFailed
    | SessionReloaded
)
