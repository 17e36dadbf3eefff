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
    return ref[ref.find(":") + 1 :]


def list_entities(
    verdicts: Mapping[str, Verdict],
    records: Mapping[str, EntityRecord],
    turn: int,
    make: dict[str, EntityView],
) -> tuple[dict[Section, list[EntityView]], dict[Section, int]]:
    """The rows of each section, most relevant first, and how many each leaves unlisted.

    ``make`` caches views by ref: a view whose record and verdict did not change is reused. A long
    session has tens of thousands of entities, nearly all pruned: they are ranked by their last
    mention alone.
    """
    first: dict[str, str] = {}  # thing -> its first ref
    kinds: dict[str, list[str]] = {}  # thing -> all its refs, for the few things with more than one
    for ref in verdicts:
        if ref in records:
            held = first.setdefault(ref[ref.find(":") + 1 :], ref)
            if held is not ref:
                kinds.setdefault(held, [held]).append(ref)
    members: dict[str, list[str]] = {}
    chosen: dict[str, str] = {}
    for held, refs in kinds.items():
        # The row takes the state that carries the thing furthest, and the kind that names it best.
        best = chosen[held] = min(
            refs, key=lambda r: (_STATE_ORDER[verdicts[r][0]], _KIND_ORDER[records[r].kind])
        )
        members[best] = refs
    rows: dict[Section, list[str]] = {section: [] for section in Section}
    for ref in first.values():
        ref = chosen.get(ref, ref)
        rows[verdicts[ref][0]].append(ref)
    shown: dict[Section, list[EntityView]] = {}
    not_shown: dict[Section, int] = {}
    for section, refs in rows.items():
        limit = ENTITY_ROWS[section]
        if section is Section.PRUNED:
            last = [
                (_last_turn(records, members[r]) if r in members else records[r].turns[-1], r) for r in refs
            ]
            best_refs = [r for _, r in heapq.nlargest(limit, last)]
        else:
            scored = [
                (-relevance([records[m] for m in members.get(r, [r])], turn), records[r].label.casefold(), r)
                for r in refs
            ]
            best_refs = [r for _, _, r in heapq.nsmallest(limit, scored)]
        shown[section] = [_view(make, records, members.get(r, [r]), r, verdicts[r][1]) for r in best_refs]
        not_shown[section] = len(refs) - len(best_refs)
    return shown, not_shown


def _last_turn(records: Mapping[str, EntityRecord], refs: list[str]) -> int:
    return max(records[r].last_turn for r in refs)


def _view(
    make: dict[str, EntityView], records: Mapping[str, EntityRecord], refs: list[str], ref: str, reason: str
) -> EntityView:
    record = records[ref]
    last_turn = _last_turn(records, refs)
    view = make.get(ref)
    if view is None or view.reason != reason or view.last_turn != last_turn or view.label != record.label:
        view = make[ref] = EntityView(ref, record.kind.value, record.label, last_turn, reason)
    return view
