"""The entity registry of a session: every entity, the turns it occurs in, and its state."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from engine.entities.mentions import EntityKind, Mention

ACTIVE_TURNS = 2
"""An entity referenced in the last this-many turns is active."""


class EntityState(enum.StrEnum):
    ACTIVE = "active"
    RETAINED = "retained"
    PRUNED = "pruned"


def pruned_reason(last_turn: int) -> str:
    """Why an entity mentioned last in ``last_turn`` is pruned."""
    return f"not mentioned since turn {last_turn}, not in the prompt"


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


Verdict = tuple[EntityState, str]
"""An entity's state and the reason for it."""


class EntityRegistry:
    """Entities by ref, with the verdicts the last applied plan gave them.

    Classifying re-examines only the entities whose verdict can have changed since (those not
    pruned, those seen again, those the prompt carries): a long session has thousands of entities
    and nearly all of them stay pruned, with the same reason, turn after turn.
    """

    def __init__(self) -> None:
        self.records: dict[str, EntityRecord] = {}
        self._verdicts: dict[str, Verdict] = {}
        self._unsettled: set[str] = set()
        """Refs with no verdict yet, or one that is not "pruned", or seen again since it was given."""
        self._words: set[str] = set()
        """Refs of names the conversation also writes as ordinary words: given no verdict."""

    @property
    def words(self) -> AbstractSet[str]:
        """Refs of names the conversation also writes as ordinary words ("Substitute" opening
        sentences, "substitute" in them): not entities, though their records are kept."""
        return self._words

    def regard(self, judged: Mapping[str, bool]) -> list[str]:
        """Take each ref of ``judged`` for an ordinary word (True) or an entity again (False);
        returns the refs that changed."""
        changed: list[str] = []
        for ref, word in judged.items():
            if word and ref not in self._words:
                self._words.add(ref)
                self._verdicts.pop(ref, None)
                self._unsettled.discard(ref)
            elif not word and ref in self._words:
                self._words.discard(ref)
                self._unsettled.add(ref)
            else:
                continue
            changed.append(ref)
        return changed

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
                if mention.ref not in self._words:
                    self._unsettled.add(mention.ref)
        return grown

    def classify(self, turn: int, kept: Mapping[str, str]) -> dict[str, Verdict]:
        """Each entity's verdict for a prompt at ``turn``; ``kept`` maps refs carried by the prompt to why."""
        verdicts = dict(self._verdicts)
        records = self.records
        # Sorted: the order of the verdicts is the order of the ledger's entity lines, and set
        # order changes with the interpreter's hash seed (replay must be deterministic).
        for ref in sorted(self._unsettled.union(kept)):
            record = records.get(ref)
            if record is None or ref in self._words:
                continue
            if record.last_turn > turn - ACTIVE_TURNS:
                verdicts[ref] = (EntityState.ACTIVE, f"mentioned in turn {record.last_turn}")
            elif ref in kept:
                verdicts[ref] = (EntityState.RETAINED, kept[ref])
            else:
                verdicts[ref] = (EntityState.PRUNED, pruned_reason(record.last_turn))
        return verdicts

    def commit(self, verdicts: Mapping[str, Verdict]) -> list[EntityChange]:
        """Adopt ``verdicts`` (from :meth:`classify`) and say which entities changed state."""
        changes: list[EntityChange] = []
        previous = self._verdicts
        for ref, verdict in verdicts.items():
            if previous.get(ref) is verdict:
                continue  # carried over unchanged from the last commit
            state, reason = verdict
            record = self.records[ref]
            if record.state != state:
                changes.append(EntityChange(ref, record.state, state, reason))
            self._adopt(ref, state, reason)
        return changes

    def load_verdict(self, ref: str, state: EntityState, reason: str) -> None:
        """Give an entity its stored verdict when a session is rebuilt (unknown refs are ignored).

        The first plan after loading re-examines it, as messages may have been added after the
        verdict was given, unless it is pruned for its last mention: it then stays pruned until it
        is mentioned again or a prompt carries it, and either re-examines it. A long session's
        entities are nearly all so, and re-examining them all made the first turn after opening
        longer.
        """
        record = self.records.get(ref)
        if record is None or ref in self._words:
            return
        self._adopt(ref, state, reason)
        if state is not EntityState.PRUNED or reason != pruned_reason(record.last_turn):
            self._unsettled.add(ref)

    def _adopt(self, ref: str, state: EntityState, reason: str) -> None:
        record = self.records[ref]
        record.state, record.reason = state, reason
        self._verdicts[ref] = (state, reason)
        if state is EntityState.PRUNED:
            self._unsettled.discard(ref)
        else:
            self._unsettled.add(ref)
