"""The LLM curator pass: what the model is shown (a brief) and what it may answer (advice).

With a model connected, each turn may ask it which older entities and messages matter now. Its
answer is advice, never a command: :mod:`engine.advice.rules` validates it (unknown refs are
ignored, the user's own messages need their consent, pins are untouchable) before the planner
weighs it. Refs are entity refs from the registry (``path:auth.py``) or message labels (``#12``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from engine.advice.calls import NO_USAGE, CallUsage
from engine.chat import Role
from engine.curation.items import MemoryRole
from engine.text.redaction import redact

RECENT_TURNS_SHOWN = 5
"""How many of the last turns the brief shows, each with its entities."""
DECISIONS_SHOWN = 8
"""How many of the curator's earlier one-line decisions the brief shows."""
ENTITIES_SHOWN = 80
"""At most this many registry entities are listed (the most recently mentioned first)."""


@dataclass(frozen=True, slots=True)
class BriefMessage:
    """One message as the curator sees it."""

    ref: str
    """``#id``: how the curator names the message."""
    role: Role
    text: str
    """Cut to a few hundred characters: the curator decides, it does not answer."""
    entities: tuple[str, ...]
    """Refs of the entities it mentions."""
    turn: int
    state: str
    """active, summarized or pruned."""
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class BriefEntity:
    ref: str
    label: str
    state: str
    """active, retained, pruned (or "new")."""
    last_turn: int


@dataclass(frozen=True, slots=True)
class CuratorBrief:
    """Everything the curator is shown for one turn."""

    new_message: BriefMessage
    recent: tuple[BriefMessage, ...]
    """The last turns before the new message, oldest first."""
    older: tuple[BriefMessage, ...]
    """Older messages that could be retained, demoted or dropped (most relevant first, bounded)."""
    entities: tuple[BriefEntity, ...]
    decisions: tuple[str, ...]
    """The curator's own earlier one-line summaries, oldest first."""
    turn: int


@dataclass(frozen=True, slots=True)
class Retain:
    ref: str
    reason: str


@dataclass(frozen=True, slots=True)
class Resolved:
    """A reference in the new message ("that recipe") and the ref the curator resolved it to."""

    phrase: str
    ref: str


@dataclass(frozen=True, slots=True)
class RoleHint:
    """The curator's memory role for a message (refines the heuristic's)."""

    ref: str
    role: MemoryRole


@dataclass(frozen=True, slots=True)
class CuratorAdvice:
    """The curator's answer, as parsed (not yet validated against the session)."""

    retain: tuple[Retain, ...] = ()
    demote: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    clear_all: bool = False
    """The conversation moved on: older unpinned things may all go."""
    resolved: tuple[Resolved, ...] = ()
    roles: tuple[RoleHint, ...] = ()
    summary: str = ""
    """One line for the curator's decision log."""


class AdviceSource(enum.StrEnum):
    STRUCTURED = "structured"
    """``chat.completions.parse`` with a JSON schema."""
    JSON = "json"
    """JSON mode, after structured output failed."""
    FALLBACK = "fallback"
    """No usable answer (timeout, error, invalid JSON): the heuristic decides alone."""


@dataclass(frozen=True, slots=True)
class AdviceOutcome:
    """What a curator call produced; ``advice`` is None on fallback and ``problem`` says why."""

    advice: CuratorAdvice | None
    source: AdviceSource
    usage: CallUsage = NO_USAGE
    problem: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        # The problem quotes the server, and goes to the panel and the ledger: no key in it.
        object.__setattr__(self, "problem", redact(self.problem))
