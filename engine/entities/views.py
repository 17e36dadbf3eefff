"""The entities a context view lists: one row per thing, the most relevant first, a few per section.

The registry keeps an entity per kind and spelling (``identifier:load_invoices`` and
``symbol:load_invoices`` are two records); the reader sees one thing, so rows are merged by what the
refs name. Relevance is how often and how lately the conversation mentions a thing, dates and
quantities counting for less than names, files and errors; only the most relevant rows of each
section are listed so that the messages stay in sight (a pasted stack trace names dozens of things).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from engine.curation.context_view import EntityView, Section
from engine.entities.mentions import EntityKind
from engine.entities.registry import EntityRecord, EntityState, Verdict

ENTITY_ROWS = {Section.ACTIVE: 6, Section.RETAINED: 4, Section.PRUNED: 4}
"""Entities listed per section; the view counts the rest (see ContextView.entities_not_shown)."""
DECAY = 0.6
"""A mention's weight falls by this factor for each turn since it was made."""
_MINOR_KINDS = {EntityKind.DATE: 0.5, EntityKind.QUANTITY: 0.5}
_STATE_ORDER = {EntityState.ACTIVE: 0, EntityState.RETAINED: 1, EntityState.PRUNED: 2}
_KIND_ORDER = {kind: rank for rank, kind in enumerate(EntityKind)}
_TURNS = operator.attrgetter("turns")
_LATEST = operator.itemgetter(-1)


RECENT_MENTIONS = 12
"""The mentions of a record that count towards its relevance: its latest."""


def _powers() -> tuple[float, ...]:
    """``DECAY ** k`` for each k until it is 0.0 (as it stays after): looked up, not computed, for
    the thousand-odd retained entities of a long session that every view ranks."""
    powers = [DECAY**0]
    while powers[-1] > 0.0:
        powers.append(DECAY ** len(powers))
    return tuple(powers)


_POWERS = _powers()


def _decay(turns: int) -> float:
    return _POWERS[turns] if turns < len(_POWERS) else 0.0


def relevance(records: Iterable[EntityRecord], turn: int) -> float:
    """How much the conversation at ``turn`` is about the thing these records (one per kind) name."""
    score = 0.0
    for record in records:
        weight = _MINOR_KINDS.get(record.kind, 1.0)
        score += weight * sum(_decay(max(0, turn - t)) for t in record.turns[-RECENT_MENTIONS:])
    return score


def _most_relevant(
    refs: list[str],
    records: Mapping[str, EntityRecord],
    members: Mapping[str, list[str]],
    turn: int,
    limit: int,
) -> list[str]:
    """The ``limit`` rows of ``refs`` most relevant at ``turn`` (ties by label, then ref). A row
    whose relevance cannot reach the last of those found so far is not scored: none of its
    records' mentions can weigh more than its latest one's."""
    bounded = []
    for ref in refs:
        group = members.get(ref, [ref])
        latest = _last_turn(records, group)
        bounded.append((RECENT_MENTIONS * len(group) * _decay(max(0, turn - latest)), ref, group))
    bounded.sort(key=lambda b: b[0], reverse=True)
    best: list[tuple[float, str, str]] = []  # sorted, at most ``limit``
    for bound, ref, group in bounded:
        if len(best) == limit and bound * (1 + 1e-6) < -best[-1][0]:
            break
        score = relevance([records[m] for m in group], turn)
        bisect.insort(best, (-score, records[ref].label.casefold(), ref))
        del best[limit:]
    return [r for _, _, r in best]


def thing(ref: str) -> str:
    """What a ref names, whatever its kind: ``symbol:load_invoices`` → ``load_invoices``."""
    return ref[ref.find(":") + 1 :]


@dataclass
class Things:
    """The refs of a session's verdicts grouped by the thing they name. The verdicts of the next
    plan hold the same refs in the same order, and perhaps new ones after them: only those are
    grouped again."""

    refs: list[str] = field(default_factory=list)
    """The refs grouped, in the verdicts' order."""
    first: dict[str, str] = field(default_factory=dict)
    """Thing → its first ref."""
    kinds: dict[str, list[str]] = field(default_factory=dict)
    """First ref → all the thing's refs, for the few things with more than one."""
    records: object = None
    """The registry records the refs were found in."""

    def update(self, verdicts: Mapping[str, Verdict], records: Mapping[str, EntityRecord]) -> None:
        refs = list(verdicts)
        done = len(self.refs)
        if records is not self.records or refs[:done] != self.refs:
            self.first, self.kinds, self.records, done = {}, {}, records, 0
        first, kinds, whole = self.first, self.kinds, True
        for ref in refs[done:]:
            if ref in records:
                held = first.setdefault(ref[ref.find(":") + 1 :], ref)
                if held is not ref:
                    kinds.setdefault(held, [held]).append(ref)
            else:
                whole = False  # it may be in them by the next view: grouped again then
        self.refs = refs
        if not whole:
            self.records = None  # grouped whole again by the next view


def list_entities(
    verdicts: Mapping[str, Verdict],
    records: Mapping[str, EntityRecord],
    turn: int,
    make: dict[str, EntityView],
    things: Things | None = None,
) -> tuple[dict[Section, list[EntityView]], dict[Section, int]]:
    """The rows of each section, most relevant first, and how many each leaves unlisted.

    ``make`` caches views by ref: a view whose record and verdict did not change is reused, and
    ``things`` the grouping of refs by thing, grown by the refs added since. A long
    session has tens of thousands of entities, nearly all pruned: they are ranked by their last
    mention alone.
    """
    grouped = things if things is not None else Things()
    grouped.update(verdicts, records)
    first, kinds = grouped.first, grouped.kinds
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
            # Most of a long session's entities: ranked in C (map and zip), not a Python loop.
            alone = [r for r in refs if r not in members]
            last = zip(map(_LATEST, map(_TURNS, map(records.__getitem__, alone))), alone, strict=True)
            merged = [(_last_turn(records, members[r]), r) for r in refs if r in members]
            best_refs = [r for _, r in heapq.nlargest(limit, itertools.chain(last, merged))]
        else:
            best_refs = _most_relevant(refs, records, members, turn, limit)
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
