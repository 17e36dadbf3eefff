"""What a curation plan produces: the prompt's messages, the plan itself, and the delta to store.

Plain frozen data shared by the curator, the turn pipeline, replay and the UI's context view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.chat import Role
from engine.curation.consent import ConsentChoice, ConsentRequest
from engine.curation.items import Item
from engine.curation.ledger import LedgerEntry
from engine.curation.operations import Operation, Scores
from engine.curation.prompt import MESSAGE_OVERHEAD_TOKENS
from engine.entities.registry import EntityState
from engine.standing.section import StandingSection

PREVIEW_CHARS = 160


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One message of the curated prompt."""

    role: Role
    content: str
    sources: tuple[int, ...]
    form: str
    """"verbatim", "summary", "story" (the story so far: a chronological digest, see
    :mod:`engine.summaries.story`), "memory", "standing" or "system"."""
    tokens: int
    """Content tokens plus the chat format's per-message overhead."""


@dataclass(frozen=True, slots=True)
class CurationResult:
    """A turn's plan: the prompt to send and the operations that produce it."""

    turn: int
    budget_tokens: int
    messages: tuple[ContextMessage, ...]
    tokens: int
    """What the prompt costs, with the reply priming."""
    operations: tuple[Operation, ...]
    scores: Mapping[int, Scores]
    entities: Mapping[str, tuple[EntityState, str]]
    consent: ConsentRequest | None = None
    left_out: tuple[int, ...] = ()
    """Items left out of this request only (pending consent or too big), with no state change."""
    over_budget: bool = False
    """Pinned items, system items and the new message alone exceed the budget."""
    notes: tuple[str, ...] = ()
    new_summaries: Mapping[int, str] = field(default_factory=dict)
    stand_ins: Mapping[int, str] = field(default_factory=dict)
    """Items left as they are while a model writes their summary, and the quick summary this
    request carries for each meanwhile."""
    curator_note: LedgerEntry | None = None
    """The curator model's line for the decision log (None: no curator pass this turn)."""
    prioritized: Mapping[int, str] = field(default_factory=dict)
    """Items sent because the curator model said they matter, with its reason."""
    standing: StandingSection | None = None
    """The standing-instructions section this request carries, if any."""
    kept_by_rule: Mapping[int, str] = field(default_factory=dict)
    """Items sent because a keep rule of the user's matched them, with the rule as the reason."""
    recent_from: int = 0
    """The first turn of the recent turns, sent whole before anything older while they fit."""
    yours: frozenset[int] = frozenset()
    """The user's messages this plan sends whole because they are the user's (never left out
    unasked), not for their scores."""
    verbatim_tokens: int = 0
    """What sending the whole conversation verbatim would cost."""
    recall_reasons: Mapping[int, str] = field(default_factory=dict)
    """Why each item sent verbatim though summarized or pruned is sent (the true cause)."""
    relevant_again: tuple[int, ...] = ()
    """Items the user took out themselves that the new message refers to: suggested, never recalled."""
    pin_suggestions: tuple[int, ...] = ()
    """Items recalled again and again (see engine.curation.pins) that would fit a pin."""
    past_budget: tuple[int, ...] = ()
    """The user's messages kept whole (their answer) that take this request past the budget."""
    pinned_tokens: int = 0
    """What the pinned messages cost in this request."""
    pin_limit_tokens: int = 0
    """The pin limit in tokens (0: none known)."""
    cold: tuple[Item, ...] = ()
    """Messages before the session's curated cut that this request recalls (not its items)."""
    repeats: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """Each paste of an error pasted more than once, with all the pastes of it in order (the
    last stands for the others: see engine.curation.repeats)."""
    story: tuple[tuple[tuple[int, ...], str], ...] = ()
    """The story section's lines, oldest first: the messages each quotes, and the line."""

    @property
    def asked_left_out(self) -> frozenset[int]:
        """The user's messages this plan cannot fit and asks about (not sent until answered)."""
        if self.consent is None:
            return frozenset()
        return frozenset(i.item_id for i in self.consent.items if i.left_out)

    @property
    def saved_tokens(self) -> int:
        """Tokens this prompt saves against sending everything verbatim."""
        return max(0, self.verbatim_tokens - self.tokens)


@dataclass(frozen=True, slots=True)
class CurationDelta:
    """What a turn (or a user action) changed, for the store to write in one transaction."""

    items: tuple[Item, ...] = ()
    entities: tuple[str, ...] = ()
    """Refs whose records changed (the caller reads them from the registry)."""
    ledger: tuple[LedgerEntry, ...] = ()
    policy: ConsentChoice | None = None
    policy_changed: bool = False
    saved_tokens: int = 0
    """Tokens this turn's prompt saved, to add to the session's total."""


def cost(tokens: int) -> int:
    """What a message of ``tokens`` content tokens costs in a request."""
    return tokens + MESSAGE_OVERHEAD_TOKENS


def preview(text: str) -> str:
    """The start of ``text`` on one line, for lists and consent requests (each shows a shorter
    start of it). Cut without an ellipsis: one non-ASCII character stores the whole string at two
    bytes a character, and a long session keeps a preview of every message."""
    return " ".join(text[: PREVIEW_CHARS * 4].split())[:PREVIEW_CHARS]
