"""Operations: every decision the engine makes about an item, with its reason and its scores.

An operation is data. The planner (:mod:`engine.curation.session_curation`) proposes them, the
session state applies them, and each one becomes a ledger entry in the same store transaction as
the state change, so the UI can always answer "why is this gone?".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from engine.curation.items import Item, ItemState


class OpKind(enum.StrEnum):
    PRUNE = "prune"
    """Leave an item out of the prompt from now on (restorable)."""
    TRANSFORM = "transform"
    """Replace an item by its summary."""
    PRIORITIZE = "prioritize"
    """Keep an older item verbatim ahead of others because it matters now (no state change)."""
    TAG = "tag"
    """Record an item's memory role (no state change)."""
    RECALL = "recall"
    """Bring a pruned or summarized item back verbatim for this turn only (no state change)."""
    RESTORE = "restore"
    """Make a pruned or summarized item active again, for good."""
    PIN = "pin"
    UNPIN = "unpin"


_KIND_OF_MOVE = {
    ItemState.PRUNED: OpKind.PRUNE,
    ItemState.SUMMARIZED: OpKind.TRANSFORM,
    ItemState.ACTIVE: OpKind.RESTORE,
}
"""The operation that moves an item into each state."""


@dataclass(frozen=True, slots=True)
class Scores:
    """The parts of an item's score, each in [0, 1], so the UI can explain a decision."""

    relevance: float = 0.0
    """Lexical match (BM25 over stemmed terms) with the new message and the recent turns."""
    entities: float = 0.0
    """Share of the new message's entities (weighted by rarity) that the item mentions."""
    neighbour: float = 0.0
    """Credit from a strongly relevant item next to it."""
    recency: float = 0.0
    """Exponential decay with the item's age in turns (the profile's half-life)."""
    role: float = 0.0
    """Decisions, errors, preferences and facts weigh more than chit-chat."""
    recurrence: float = 0.0
    """How often the item's entities come up across the conversation."""
    total: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "relevance": round(self.relevance, 4),
            "entities": round(self.entities, 4),
            "neighbour": round(self.neighbour, 4),
            "recency": round(self.recency, 4),
            "role": round(self.role, 4),
            "recurrence": round(self.recurrence, 4),
            "total": round(self.total, 4),
        }


@dataclass(frozen=True, slots=True)
class Operation:
    """One decision about one item."""

    op: OpKind
    target: int
    """The item's id."""
    reason: str
    turn: int
    scores: Scores | None = None
    requires_consent: bool = False
    """The item is the user's: this needed (and got) their consent."""
    reversible: bool = True
    before: ItemState | None = None
    after: ItemState | None = None
    detail: str | None = None
    """Extra words for the ledger: the tag, the summary's size, the consent answer."""

    @classmethod
    def moving(
        cls,
        item: Item,
        after: ItemState,
        reason: str,
        turn: int,
        *,
        scores: Scores | None = None,
        requires_consent: bool = False,
    ) -> Operation:
        """The operation that takes ``item`` from its current state to ``after``: pruning it,
        summarizing it or making it active again (the kind follows from ``after``)."""
        return cls(
            _KIND_OF_MOVE[after],
            item.id,
            reason,
            turn,
            scores=scores,
            requires_consent=requires_consent,
            before=item.state,
            after=after,
        )

    @property
    def changes_state(self) -> bool:
        return self.before is not None and self.after is not None and self.before != self.after
