"""Scores: how much each item matters for the next request, in explainable parts.

``total = 0.47·relevance + 0.47·neighbour + 0.03·recency + 0.02·role + 0.01·recurrence`` (``WEIGHTS``);
every part lies in [0, 1]. Entity overlap is computed and explained but weighs nothing in the total:
on conversations it added nothing that the stemmed words did not already carry; it still decides
recalls (an item whose rare entity the new message names comes back). Relevance to the new
message, and being next to something relevant, dominate: they are the best evidence of what the
model will need. The others decide when the new message says little ("ok, and then?") and keep
decisions and errors ahead of chit-chat. With embeddings on, relevance counts closeness in
meaning beside the words (:mod:`engine.curation.dense`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.curation.budget import Profile
from engine.curation.index import EntityIndex, TermIndex
from engine.curation.items import Item
from engine.curation.operations import Scores
from engine.entities.registry import EntityRegistry
from engine.text.roles import ROLE_WEIGHT

if TYPE_CHECKING:  # numpy is imported only when embeddings are on
    from engine.curation.dense import Similarities

WEIGHTS = {
    "relevance": 0.47,
    "entities": 0.0,
    "neighbour": 0.47,
    "recency": 0.03,
    "role": 0.02,
    "recurrence": 0.01,
}
TERSE_TERMS = 1
"""A new message with at most this many content words is a terse follow-up ("and on staging?")."""
RECENT_WEIGHT = 0.5
"""The recent turns' words join the query at this weight, for terse follow-ups only: measured on
conversations, they drown a self-contained question's own words."""
ENTITY_TERM_WEIGHT = 1.5
MIN_NEIGHBOUR_SOURCE = 0.05
"""Items less relevant than this pass no credit to their neighbours (it would change no ranking)."""
MIN_ENTITY_SHARE = 0.1
"""Entities whose rarity gives less than this share are skipped when scoring entity overlap."""
ADJACENT_SHARE = 1.0
SECOND_SHARE = 0.5
"""Shares of a relevant item's relevance credited to the items right before and after it, and to
the items two places away: the answer to a question usually sits right after it, and the context of
a statement right before."""
RECURRENCE_TURNS = 5
"""An entity seen in this many turns counts as fully recurring."""


def score_items(
    items: Sequence[Item],
    *,
    session: Sequence[Item],
    by_id: Mapping[int, Item],
    excluded: set[int],
    new_terms: Mapping[str, int],
    new_refs: frozenset[str],
    new_entity_terms: frozenset[str] = frozenset(),
    recent_terms: Mapping[str, int],
    recent_refs: set[str],
    turn: int,
    profile: Profile,
    term_index: TermIndex,
    entity_index: EntityIndex,
    registry: EntityRegistry,
    dense: Similarities | None = None,
) -> ScoreTable:
    """Score ``items`` against the new message; cost grows with the items and the query's postings.

    Args:
        items: The candidates: every item of ``session`` whose id is not in ``excluded``.
        session: All the session's items, in conversation order (``item.position`` indexes it).
        by_id: The same items by id.
        excluded: Ids that are not candidates (the new message, the recent turns, pinned items).
        dense: The candidates' similarity in meaning to the new message, when embeddings are on:
            it joins the relevance (see :func:`engine.curation.dense.combine`).
    """
    # Words that name an entity of the new message (a person, a file, an error) say more about what
    # it is after than its other words.
    query: dict[str, float] = {
        term: ENTITY_TERM_WEIGHT if term in new_entity_terms else 1.0 for term in new_terms
    }
    recent_weight = RECENT_WEIGHT if len(new_terms) <= TERSE_TERMS else 0.0
    if recent_weight:
        for term in recent_terms:
            query[term] = query.get(term, 0.0) + recent_weight
    raw = term_index.scores(query)
    for key in excluded:
        raw.pop(key, None)
    top = max(raw.values(), default=0.0)
    wording = relevance = {k: v / top for k, v in raw.items()} if top > 0 else {}
    if dense is not None:
        from engine.curation.dense import combine

        relevance = combine(wording, dense)

    # Shared entities count by rarity on an absolute scale: one entity found only in this item
    # scores near 1, a name that half the conversation mentions scores little.
    entity_weights = {ref: entity_index.rarity(ref) for ref in new_refs}
    for ref in recent_refs - new_refs:
        entity_weights[ref] = entity_index.rarity(ref) * recent_weight
    scale = entity_index.max_rarity()
    entity_score: dict[int, float] = {}
    for ref, weight in entity_weights.items():
        if weight / scale < MIN_ENTITY_SHARE:
            continue  # so common it says nothing about any one item, and walking it costs the most
        for doc in entity_index.items_with(ref):
            if doc not in excluded:
                entity_score[doc] = entity_score.get(doc, 0.0) + weight / scale

    neighbour = _neighbour_credit(relevance, session, by_id, excluded)

    table = ScoreTable(
        items,
        relevance=relevance,
        entities=entity_score,
        neighbour=neighbour,
        turn=turn,
        half_life=profile.half_life,
        registry=registry,
    )
    table.query, table.top, table.wording = query, top, wording
    return table


class ScoreTable(Mapping[int, Scores]):
    """Every item's score: totals computed at once (to rank), explained parts built on demand.

    Building a :class:`Scores` per item would cost more than the scoring itself at 10,000 items;
    only the few that an operation or the UI explains need one.
    """

    def __init__(
        self,
        items: Sequence[Item],
        *,
        relevance: Mapping[int, float],
        entities: Mapping[int, float],
        neighbour: Mapping[int, float],
        turn: int,
        half_life: float,
        registry: EntityRegistry,
    ) -> None:
        self._listed = items
        self._by_id: dict[int, Item] | None = None
        self._relevance = relevance
        self._entities = entities
        self._neighbour = neighbour
        self._turn = turn
        self._half_life = half_life
        self._registry = registry
        w = WEIGHTS
        w_relevance, w_entities, w_neighbour = w["relevance"], w["entities"], w["neighbour"]
        # Items never come from a later turn than the one being planned, so ages index ``decay``.
        decay = _decay(w["recency"], half_life, turn)
        relevance_of, neighbour_of = relevance.get, neighbour.get
        total: dict[int, float] = {}
        for item in items:
            prior = item.prior
            if prior is None:
                prior = item.prior = _prior(item, registry)
            key = item.id
            total[key] = (
                decay[turn - item.turn]
                + prior
                + w_relevance * relevance_of(key, 0.0)
                + w_neighbour * neighbour_of(key, 0.0)
            )
        if w_entities:
            for key, value in entities.items():
                if key in total:
                    total[key] += w_entities * min(1.0, value)
        self.total = total
        self.query: Mapping[str, float] = {}
        """The weighted terms the items were scored against (see :func:`score_items`)."""
        self.top = 0.0
        """The best raw BM25 score among the items: relevance is each one's share of it."""
        self.wording: Mapping[int, float] = relevance
        """Relevance from the words alone (the same as relevance when embeddings are off)."""

    @property
    def _items(self) -> dict[int, Item]:
        """The scored items by id, made when first asked (most plans never ask)."""
        if self._by_id is None:
            self._by_id = {item.id: item for item in self._listed}
        return self._by_id

    def add_outside(self, scored: Sequence[OutsideScore]) -> None:
        """Score items that are not the session's (messages before its cut, see
        :mod:`engine.curation.cold_recall`), each with its parts measured apart, weighed as the
        session's items are."""
        relevance, entities, wording = dict(self._relevance), dict(self._entities), dict(self.wording)
        neighbour = dict(self._neighbour)
        for outside in scored:
            item = outside.item
            self._items[item.id] = item
            relevance[item.id], entities[item.id] = outside.relevance, outside.entities
            neighbour[item.id] = outside.neighbour
            wording[item.id] = outside.relevance  # by their words alone (see cold_recall.admit)
            prior = item.prior
            if prior is None:
                prior = item.prior = _prior(item, self._registry)
            recency = WEIGHTS["recency"] * 0.5 ** (max(0, self._turn - item.turn) / self._half_life)
            self.total[item.id] = (
                recency
                + prior
                + WEIGHTS["relevance"] * outside.relevance
                + WEIGHTS["neighbour"] * outside.neighbour
            )
        self._relevance, self._entities, self.wording = relevance, entities, wording
        self._neighbour = neighbour

    def rescale(self, top: float) -> None:
        """Restate every item's relevance as its share of ``top``, a better raw score found outside
        the items (see :mod:`engine.curation.cold_recall`), as if it had been scored with them: the
        neighbour credit relevance lends, and so the totals, shrink in step."""
        if top <= self.top:
            return
        share = self.top / top
        w_relevance, w_neighbour = WEIGHTS["relevance"], WEIGHTS["neighbour"]
        relevance, neighbour, total = self._relevance, self._neighbour, self.total
        for key in (relevance.keys() | neighbour.keys()) & total.keys():
            lent = w_relevance * relevance.get(key, 0.0) + w_neighbour * neighbour.get(key, 0.0)
            total[key] -= (1.0 - share) * lent
        self._relevance = {key: value * share for key, value in relevance.items()}
        self._neighbour = {key: value * share for key, value in neighbour.items()}
        self.wording = {key: value * share for key, value in self.wording.items()}
        self.top = top

    def named(self, threshold: float) -> set[int]:
        """The items the new message refers to directly: by wording, or by a rare shared entity."""
        found = {key for key, value in self._relevance.items() if value >= threshold}
        found.update(key for key, value in self._entities.items() if value >= 0.5)
        return found

    def relevance_of(self, key: int) -> float:
        """An item's relevance to the new message (0 for the items not scored)."""
        return self._relevance.get(key, 0.0)

    def by_wording(self, key: int) -> float:
        """An item's relevance from its words alone, without its similarity in meaning."""
        return self.wording.get(key, 0.0)

    def beside(self, threshold: float) -> set[int]:
        """The items next to items the new message refers to (by ``threshold`` of neighbour credit)."""
        return {key for key, value in self._neighbour.items() if value >= threshold}

    def __getitem__(self, key: int) -> Scores:
        item = self._items[key]
        return Scores(
            relevance=self._relevance.get(key, 0.0),
            entities=min(1.0, self._entities.get(key, 0.0)),
            neighbour=self._neighbour.get(key, 0.0),
            recency=0.5 ** (max(0, self._turn - item.turn) / self._half_life),
            role=ROLE_WEIGHT[item.memory_role],
            recurrence=_recurrence(item, self._registry),
            total=self.total[key],
        )

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


_DECAYS: dict[tuple[float, float], list[float]] = {}
"""Each (weight, half-life)'s recency weights by age, grown as turns pass: the same every plan."""


def _decay(weight: float, half_life: float, turn: int) -> list[float]:
    """The weighted recency of ages 0 to ``turn`` at least (computed once per age, not per plan)."""
    decay = _DECAYS.get((weight, half_life))
    if decay is None or len(decay) <= turn:
        # A new list, never one grown in place: another thread may be reading the old one.
        decay = [weight * 0.5 ** (age / half_life) for age in range(max(turn + 1, 2 * len(decay or ())))]
        _DECAYS[(weight, half_life)] = decay
    return decay


@dataclass(frozen=True, slots=True)
class OutsideScore:
    """An item from outside the session's curated part, with the parts of its score measured apart."""

    item: Item
    relevance: float
    entities: float
    neighbour: float


def _neighbour_credit(
    relevance: Mapping[int, float], session: Sequence[Item], by_id: Mapping[int, Item], excluded: set[int]
) -> dict[int, float]:
    """Each item's credit (at most 1) for sitting next to relevant items (``ADJACENT_SHARE``...).

    Computed over position-indexed lists: at 10,000 items thousands of them share a common word of
    the new message, and per-item dictionary updates cost several times more.
    """
    size = len(session)
    pad = 2  # items two places away get credit
    source = [0.0] * (size + 2 * pad)
    for doc, value in relevance.items():
        if value >= MIN_NEIGHBOUR_SOURCE:
            source[by_id[doc].position + pad] = value
    # Element p of each slice is the relevance at position p-1, p+1, p-2 and p+2; the last slice
    # is exactly ``size`` long and ends the zip.
    before, after = source[pad - 1 :], source[pad + 1 :]
    two_before, two_after = source[pad - 2 :], source[pad + 2 :]
    credit = [
        ADJACENT_SHARE * (a + b) + SECOND_SHARE * (c + d)
        for a, b, c, d in zip(before, after, two_before, two_after, strict=False)
    ]
    found = {
        item.id: value if value < 1.0 else 1.0 for item, value in zip(session, credit, strict=True) if value
    }
    for key in excluded:  # a few items: dropped after, not tested for each of 10,000
        found.pop(key, None)
    return found


def _prior(item: Item, registry: EntityRegistry) -> float:
    """The weighted role and recurrence parts: they change rarely, so items cache them."""
    return WEIGHTS["role"] * ROLE_WEIGHT[item.memory_role] + WEIGHTS["recurrence"] * _recurrence(
        item, registry
    )


def _recurrence(item: Item, registry: EntityRegistry) -> float:
    if item.recurrence is not None:
        return item.recurrence
    total = 0.0
    records, words = registry.records, registry.words
    entities = [m for m in item.mentions if m.ref not in words] if words else item.mentions
    for mention in entities:
        record = records.get(mention.ref)
        seen = len(record.turns) if record is not None else 1
        total += min(1.0, (seen - 1) / (RECURRENCE_TURNS - 1))
    item.recurrence = total / len(entities) if entities else 0.0
    return item.recurrence
