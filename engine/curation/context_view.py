"""A read-only picture of a session's context, for the UI: what is sent, kept, summarized or pruned.

Plain data, cheap to import (the UI imports it at start-up); :mod:`engine.curation.context_building` makes
it from a curation plan. Each message is sent in full, sent as (part of) a summary, or not sent;
its :class:`Mark` says which, and a mark is never shown for a form the request does not carry.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.curation.budget import budget_share
from engine.entities.registry import EntityState

if TYPE_CHECKING:  # the fields' types only: the first frame imports this module, not the engine
    from engine.advice.calls import CallsReport
    from engine.chat import BuildProgress
    from engine.curation.consent import ConsentRequest
    from engine.curation.items import ItemState
    from engine.curation.ledger import LedgerEntry
    from engine.curation.operations import Scores
    from engine.curation.result import ContextMessage
    from engine.standing.section import StandingSection

Section = EntityState
"""Where an entity (or a message) stands: active (recent), retained (older, still sent), pruned."""


class Mark(enum.StrEnum):
    """How a message stands in the next request, as the chat and the panel mark it."""

    VERBATIM = "verbatim"
    PINNED = "pinned"
    RECALLED = "recalled"
    """Pruned or summarized, but sent verbatim this time because the new message refers to it."""
    SUMMARIZED = "summarized"
    """Its summary is in the request's summary section (only then)."""
    PRUNED = "pruned"
    LEFT_OUT = "left out"
    """Not sent this time (no room, or a summary that is not in this request); nothing was removed."""


SENT_IN_FULL = frozenset({Mark.VERBATIM, Mark.PINNED, Mark.RECALLED})
"""The marks of a message the request carries word for word."""


class Part(enum.StrEnum):
    """What a share of the next request is, in the panel's words (in prompt order)."""

    SYSTEM = "system"
    """The system prompt, system messages and the few tokens that frame the reply."""
    MEMORY = "memory"
    STANDING = "standing"
    """The standing instructions section (engine.standing.section)."""
    PINNED = "pinned"
    STORY = "story so far"
    """The chronological digest of the messages not sent in full (engine.summaries.story)."""
    SUMMARIES = "summaries"
    OLDER = "older kept"
    RECALLED = "recalled"
    RECENT = "recent turns"
    """The last turns and the new message."""


@dataclass(frozen=True, slots=True)
class RequestPart:
    part: Part
    tokens: int
    messages: int
    """How many of the session's messages it carries (0 for the system prompt and memory)."""


SENT_AS_SUMMARY = "sent as summary"


def placement(mark: Mark) -> str:
    """ "sent in full", "sent as summary" or "not sent": the panel's section for a mark."""
    if mark in SENT_IN_FULL:
        return "sent in full"
    return SENT_AS_SUMMARY if mark is Mark.SUMMARIZED else "not sent"


@dataclass(frozen=True, slots=True)
class EntityView:
    ref: str
    kind: str
    label: str
    last_turn: int
    reason: str


@dataclass(frozen=True, slots=True)
class ItemView:
    id: int
    role: str
    label: str
    preview: str
    tokens: int
    state: ItemState
    pinned: bool
    section: Section
    mark: Mark
    reason: str
    """Why it is where it is, in a few words (the ledger has the full story)."""
    summary: str | None = None
    """Its summary, when it has one (or this plan makes one)."""
    group: tuple[int, ...] = ()
    """When it is a paste of an error pasted more than once: every paste of it, in order (the
    last stands for the others)."""
    story: tuple[str, ...] = ()
    """The lines of the request's story so far that quote it, oldest first (none when it quotes
    nothing of it): a message not sent in full may still be in the request in these words."""

    @property
    def repeated(self) -> int:
        """How many pastes this one stands for (the group's latest; 0 for any other message)."""
        return len(self.group) if self.group and self.group[-1] == self.id else 0

    @property
    def in_prompt(self) -> bool:
        return self.mark in SENT_IN_FULL or self.mark is Mark.SUMMARIZED

    @property
    def sent_in_full(self) -> bool:
        return self.mark in SENT_IN_FULL

    @property
    def placement(self) -> str:
        """Where it is in the next request, in the panel's words."""
        return placement(self.mark)


@dataclass(frozen=True, slots=True)
class ContextView:
    """Everything the context panel shows after a turn (or for the next one)."""

    turn: int
    tokens: int
    budget: int
    window: int
    saved_tokens: int
    """Tokens this request saves against sending every message verbatim."""
    session_saved_tokens: int
    """Tokens saved over the session's turns so far."""
    active: tuple[EntityView, ...]
    retained: tuple[EntityView, ...]
    pruned: tuple[EntityView, ...]
    """The entities of each section: one row per thing, the most relevant first, only a few
    (engine.entities.views.ENTITY_ROWS) so that the messages stay in sight."""
    items: tuple[ItemView, ...]
    """Every message of the session, in conversation order."""
    messages: tuple[ContextMessage, ...]
    """Exactly what the request sends."""
    notes: tuple[str, ...]
    consent: ConsentRequest | None
    over_budget: bool
    calls: CallsReport | None = None
    """What curation's own model calls (the curator pass, summaries) cost; None: there were none."""
    alerts: tuple[str, ...] = ()
    """What the user should know first, in words, at the top of the panel: their messages not being
    sent until they choose, messages that look relevant again, pin suggestions and limits."""
    entities_not_shown: Mapping[Section, int] = field(default_factory=dict)
    """How many entities of each section are less relevant than those listed, and not listed."""
    upcoming: bool = False
    """A plan for a request not sent yet (between turns, or for a draft): what it saves is not
    counted in :attr:`session_saved_tokens`, and the calls of "this turn" were the last turn's."""
    uncurated_through: int = 0
    """In a session too long to curate whole, the last message left out of curation (those up to
    it are only stored); 0 when every message is curated."""
    building: BuildProgress | None = None
    """The session's curation is still being read: the plan is of the latest messages read so far."""
    parts: tuple[RequestPart, ...] = ()
    """What the request's :attr:`tokens` are made of, in prompt order (they add up to them)."""
    standing: StandingSection | None = None
    """The standing instructions the request carries (the panel's standing rows)."""

    @property
    def fraction(self) -> float:
        """How full the budget is (see :func:`engine.curation.budget.budget_share`)."""
        return budget_share(self.tokens, self.budget)

    @property
    def recalled(self) -> tuple[ItemView, ...]:
        return tuple(i for i in self.items if i.mark is Mark.RECALLED)

    def item(self, item_id: int) -> ItemView | None:
        return next((i for i in self.items if i.id == item_id), None)


@dataclass(frozen=True, slots=True)
class ItemDetail:
    """Everything "inspect" shows about one message: its text, where it stands, and why."""

    view: ItemView
    text: str
    summary: str | None
    memory_role: str
    scores: Scores | None
    """Its score parts against the last user message (None when it was not scored)."""
    ledger: tuple[LedgerEntry, ...]
    """Every ledger entry about it, oldest first."""
    unscored: str = ""
    """Why it has no score, in words (empty when it has one)."""
    worth: float | None = None
    """What it is ranked by for the room (:func:`engine.curation.choosing.worth`); None when it
    does not compete: unscored, or summarized, removed or kept aside by the user."""
