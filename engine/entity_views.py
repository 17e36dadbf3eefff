"""The entities a context view lists: one row per thing, the most relevant first, a few per section.

The registry keeps an entity per kind and spelling (``identifier:load_invoices`` and
``symbol:load_invoices`` are two records); the reader sees one thing, so rows are merged by what the
refs name. Relevance is how often and how lately the conversation mentions a thing, dates and
quantities counting for less than names, files and errors; only the most relevant rows of each
section are listed so that the messages stay in sight (a pasted stack trace names dozens of things).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping

from engine.context_view import EntityView, Section
from engine.mentions import EntityKind
from engine.registry import EntityRecord, EntityState, Verdict

ENTITY_ROWS = {Section.ACTIVE: 6, Section.RETAINED: 4, Section.PRUNED: 4}
"""Entities listed per section; the view counts the rest (see ContextView.entities_not_shown)."""
DECAY = 0.6
"""A mention's weight falls by this factor for each turn since it was made."""
_MINOR_KINDS = {EntityKind.DATE: 0.5, EntityKind.QUANTITY: 0.5}
_STATE_ORDER = {EntityState.ACTIVE: 0, EntityState.RETAINED: 1, EntityState.PRUNED: 2}
_KIND_ORDER = {kind: rank for rank, kind in enumerate(EntityKind)}


def relevance(records: Iterable[EntityRecord], turn: int) -> float:
    """How much the conversation at ``turn`` is about the thing these records (one per kind) name."""
    score = 0.0
    for record in records:
        weight = _MINOR_KINDS.get(record.kind, 1.0)
        score += weight * sum(DECAY ** max(0, turn - t) for t in record.turns[-12:])
    return score


def thing(ref: str) -> str:
    """What a ref names, whatever its kind: ``symbol:load_invoices`` → ``load_invoices``."""
    return ref.partition(":")[2]


def list_entities(
    verdicts: Mapping[str, Verdict],
    records: Mapping[str, EntityRecord],
    turn: int,
    make: dict[str, EntityView],
) -> tuple[dict[Section, list[EntityView]], dict[Section, int]]:
    """The rows of each section, most relevant first, and how many each leaves unlisted.

    ``make`` caches views by ref: a view whose record and verdict did not change is reused.
    """
    groups: dict[str, list[tuple[str, EntityState, str]]] = {}
    for ref, (state, reason) in verdicts.items():
        if ref in records:
            groups.setdefault(thing(ref), []).append((ref, state, reason))
    ranked: dict[Section, list[tuple[float, str, str, str]]] = {section: [] for section in Section}
    for members in groups.values():
        # The row takes the state that carries the thing furthest, and the kind that names it best.
        ref, state, reason = min(members, key=lambda m: (_STATE_ORDER[m[1]], _KIND_ORDER[records[m[0]].kind]))
        merged = [records[m[0]] for m in members]
        score = relevance(merged, turn) if state is not EntityState.PRUNED else _pruned_key(merged)
        ranked[state].append((score, records[ref].label.casefold(), ref, reason))
    shown: dict[Section, list[EntityView]] = {}
    not_shown: dict[Section, int] = {}
    for section, rows in ranked.items():
        best = heapq.nsmallest(ENTITY_ROWS[section], rows, key=lambda r: (-r[0], r[1]))
        shown[section] = [_view(make, records, groups[thing(ref)], ref, reason) for _, _, ref, reason in best]
        not_shown[section] = len(rows) - len(best)
    return shown, not_shown


def _pruned_key(records: list[EntityRecord]) -> float:
    """Pruned things rank by their last mention, then by how often they were mentioned."""
    return max(r.last_turn for r in records) + min(sum(len(r.turns) for r in records), 999) / 1000


def _view(
    make: dict[str, EntityView],
    records: Mapping[str, EntityRecord],
    members: list[tuple[str, EntityState, str]],
    ref: str,
    reason: str,
) -> EntityView:
    record = records[ref]
    last_turn = max(records[m[0]].last_turn for m in members)
    view = make.get(ref)
    if view is None or view.reason != reason or view.last_turn != last_turn or view.label != record.label:
        view = make[ref] = EntityView(ref, record.kind.value, record.label, last_turn, reason)
    return view
