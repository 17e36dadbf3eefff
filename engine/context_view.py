"""A read-only picture of a session's context, for the UI: what is sent, kept, summarized or pruned."""

from __future__ import annotations

from dataclasses import dataclass

from engine.consent import ConsentRequest
from engine.curation_result import CurationResult
from engine.curator import SessionCuration
from engine.items import ItemState
from engine.registry import EntityState


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
    preview: str
    tokens: int
    state: ItemState
    pinned: bool
    in_prompt: bool


@dataclass(frozen=True, slots=True)
class ContextView:
    """Everything the context panel shows after a turn (or for the next one)."""

    turn: int
    tokens: int
    budget: int
    window: int
    saved_tokens: int
    active: tuple[EntityView, ...]
    retained: tuple[EntityView, ...]
    pruned: tuple[EntityView, ...]
    items: tuple[ItemView, ...]
    """Items that are not plain active ones: pinned, summarized, pruned, or left out."""
    notes: tuple[str, ...]
    consent: ConsentRequest | None
    over_budget: bool

    @property
    def fraction(self) -> float:
        """How full the model's window is."""
        return self.tokens / self.window if self.window else 1.0

    @classmethod
    def empty(cls, curation: SessionCuration, tokens: int) -> ContextView:
        """A session with no user message yet: only the system prompt would be sent."""
        return cls(
            0, tokens, curation.budget.tokens, curation.budget.window, 0, (), (), (), (), (), None, False
        )

    @classmethod
    def of(cls, curation: SessionCuration, result: CurationResult) -> ContextView:
        groups: dict[EntityState, list[EntityView]] = {state: [] for state in EntityState}
        for ref, (state, reason) in result.entities.items():
            record = curation.registry.records.get(ref)
            if record is None:
                continue
            groups[state].append(EntityView(ref, record.kind.value, record.label, record.last_turn, reason))
        for views in groups.values():
            views.sort(key=lambda e: (-e.last_turn, e.label.casefold()))
        sent = {source for m in result.messages if m.form == "verbatim" for source in m.sources}
        items = tuple(
            ItemView(
                i.id,
                i.role,
                i.preview,
                i.tokens,
                i.state,
                i.pinned,
                i.id in sent,
            )
            for i in curation.items
            if i.pinned or i.state is not ItemState.ACTIVE or i.id in result.left_out
        )
        return cls(
            turn=result.turn,
            tokens=result.tokens,
            budget=result.budget_tokens,
            window=curation.budget.window,
            saved_tokens=result.saved_tokens,
            active=tuple(groups[EntityState.ACTIVE]),
            retained=tuple(groups[EntityState.RETAINED]),
            pruned=tuple(groups[EntityState.PRUNED]),
            items=items,
            notes=result.notes,
            consent=result.consent,
            over_budget=result.over_budget,
        )
