"""The entity registry of a session: every entity, the turns it occurs in, and its state."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.mentions import EntityKind, Mention

ACTIVE_TURNS = 2
"""An entity referenced in the last this-many turns is active."""


class EntityState(enum.StrEnum):
    ACTIVE = "active"
    RETAINED = "retained"
    PRUNED = "pruned"


@dataclass(slots=True)
class EntityRecord:
    ref: str
    kind: EntityKind
    label: str
    turns: list[int] = field(default_factory=list)
    """Sorted, without repeats."""
    state: EntityState | None = None
    """None until the first turn that classifies it."""
    reason: str = ""

    @property
    def last_turn(self) -> int:
        return self.turns[-1] if self.turns else 0

    def as_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "kind": self.kind.value,
            "label": self.label,
            "last_turn": self.last_turn,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class EntityChange:
    ref: str
    before: EntityState | None
    after: EntityState
    reason: str


class EntityRegistry:
    def __init__(self) -> None:
        self.records: dict[str, EntityRecord] = {}

    def observe(self, mentions: Iterable[Mention], turn: int) -> list[str]:
        """Note that ``mentions`` occur in ``turn``; returns the refs seen in a turn they were not before."""
        grown: list[str] = []
        for mention in mentions:
            record = self.records.get(mention.ref)
            if record is None:
                record = self.records[mention.ref] = EntityRecord(mention.ref, mention.kind, mention.label)
            record.label = mention.label
            if not record.turns or record.turns[-1] != turn:
                if record.turns and record.turns[-1] > turn:
                    record.turns = sorted({*record.turns, turn})
                else:
                    record.turns.append(turn)
                grown.append(mention.ref)
        return grown

    def classify(self, turn: int, kept: dict[str, str]) -> dict[str, tuple[EntityState, str]]:
        """Each entity's state for a prompt at ``turn``; ``kept`` maps refs carried by the prompt to why."""
        states: dict[str, tuple[EntityState, str]] = {}
        for ref, record in self.records.items():
            if record.last_turn > turn - ACTIVE_TURNS:
                states[ref] = (EntityState.ACTIVE, f"mentioned in turn {record.last_turn}")
            elif ref in kept:
                states[ref] = (EntityState.RETAINED, kept[ref])
            else:
                states[ref] = (
                    EntityState.PRUNED,
                    f"not mentioned since turn {record.last_turn}, not in the prompt",
                )
        return states

    def commit(self, states: dict[str, tuple[EntityState, str]]) -> list[EntityChange]:
        """Adopt ``states`` and say which entities changed state."""
        changes: list[EntityChange] = []
        for ref, (state, reason) in states.items():
            record = self.records[ref]
            if record.state != state:
                changes.append(EntityChange(ref, record.state, state, reason))
            record.state = state
            record.reason = reason
        return changes
