"""The ledger: an append-only record of every forgetting decision, consent answer and entity change.

Entries are written in the same store transaction as the state change they describe, so the ledger
and the state can never disagree. Nothing is ever removed from it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from engine.curation.operations import Operation


class EntryKind(enum.StrEnum):
    OPERATION = "operation"
    CONSENT = "consent"
    """The user's answer to a consent request (or the session policy answering for them)."""
    ENTITY = "entity"
    """An entity moved between active, retained and pruned."""
    OVERFLOW = "overflow"
    """The budget could not hold everything: what was left out of one request, and why."""
    CURATOR = "curator"
    """The curator model's one-line account of a turn, or why its advice was not used. These
    entries are the curator's decision log: the next turns show it its own earlier decisions."""
    RULE = "rule"
    """The user added or removed a keep rule (engine.curation.keep_rules), or changed a standing
    instruction (engine.standing)."""


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One line of the ledger."""

    kind: EntryKind
    turn: int
    target: str
    """An item id (as text) or an entity ref."""
    action: str
    """The operation (prune, transform, ...), the consent answer, or the entity's new state."""
    reason: str
    scores: dict[str, float] = field(default_factory=dict)
    before: str | None = None
    after: str | None = None
    requires_consent: bool = False
    reversible: bool = True
    id: int | None = None
    """Assigned by the store."""

    @classmethod
    def of(cls, operation: Operation) -> LedgerEntry:
        return cls(
            kind=EntryKind.OPERATION,
            turn=operation.turn,
            target=str(operation.target),
            action=operation.op.value,
            reason=operation.reason
            if operation.detail is None
            else f"{operation.reason} ({operation.detail})",
            scores=operation.scores.as_dict() if operation.scores else {},
            before=operation.before.value if operation.before else None,
            after=operation.after.value if operation.after else None,
            requires_consent=operation.requires_consent,
            reversible=operation.reversible,
        )

    @classmethod
    def consent(cls, turn: int, item_id: int, answer: str, reason: str) -> LedgerEntry:
        """The user's consent for one of their messages (an answer, a request, or "apply to all")."""
        return cls(EntryKind.CONSENT, turn, str(item_id), answer, reason, requires_consent=True)

    @classmethod
    def keep_rule(cls, turn: int, text: str, *, added: bool) -> LedgerEntry:
        """The user added (or removed) the keep rule ``text``."""
        action = "keep rule added" if added else "keep rule removed"
        return cls(EntryKind.RULE, turn, "rule", action, f'by you: "{text}"')

    @classmethod
    def standing(cls, turn: int, action: str, text: str) -> LedgerEntry:
        """The user changed a standing instruction ("standing instruction added", "... edited",
        "... removed"); ``text`` is theirs."""
        return cls(EntryKind.RULE, turn, "standing", action, f'by you: "{text}"')

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "turn": self.turn,
            "target": self.target,
            "action": self.action,
            "reason": self.reason,
            "scores": self.scores,
            "before": self.before,
            "after": self.after,
            "requires_consent": self.requires_consent,
            "reversible": self.reversible,
        }
