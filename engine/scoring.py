"""Scores: how much each item matters for the next request, in explainable parts.

``total = 0.5·relevance + 0.3·neighbour + 0.08·entities + 0.06·recency + 0.04·role + 0.02·recurrence``;
every part lies in [0, 1]. Relevance to the new message, and being next to something relevant,
dominate: they are the best evidence of what the model will need. The others decide when the new
message says little ("ok, and then?") and keep decisions and errors ahead of chit-chat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.budget import Profile
from engine.index import EntityIndex, TermIndex
from engine.items import Item
from engine.operations import Scores
from engine.registry import EntityRegistry
from engine.roles import ROLE_WEIGHT

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
_NEIGHBOURS = ((-1, 1.0), (1, 1.0), (-2, 0.5), (2, 0.5))
"""Offset → share of a relevant item's relevance credited to the item at that offset: the answer to
a question usually sits right after it, and the context of a statement right before."""
RECURRENCE_TURNS = 5
"""An entity seen in this many turns counts as fully recurring."""


def score_items(
    items: Sequence[Item],
    *,
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
) -> dict[int, Scores]:
    """Score ``items`` against the new message; cost grows with the items and the query's postings."""
    # Words that name an entity of the new message (a person, a file, an error) say more about what
    # it is after than its other words.
    query: dict[str, float] = {
        term: ENTITY_TERM_WEIGHT if term in new_entity_terms else 1.0 for term in new_terms
    }
    recent_weight = RECENT_WEIGHT if len(new_terms) <= TERSE_TERMS else 0.0
    for term in recent_terms:
        query[term] = query.get(term, 0.0) + recent_weight
    raw = term_index.scores(query)
    wanted = {i.id for i in items}
    top = max((v for k, v in raw.items() if k in wanted), default=0.0)
    relevance = {k: v / top for k, v in raw.items() if k in wanted} if top > 0 else {}

    # Shared entities count by rarity on an absolute scale: one entity found only in this item
    # scores near 1, a name that half the conversation mentions scores little.
    entity_weights = {ref: entity_index.rarity(ref) for ref in new_refs}
    for ref in recent_refs - new_refs:
        entity_weights[ref] = entity_index.rarity(ref) * recent_weight
    scale = entity_index.max_rarity()
    entity_score: dict[int, float] = {}
    for ref, weight in entity_weights.items():
        for doc in entity_index.items_with(ref):
            if doc in wanted:
                entity_score[doc] = entity_score.get(doc, 0.0) + weight / scale

    by_position = {i.position: i for i in items}
    position_of = {i.id: i.position for i in items}
    neighbour: dict[int, float] = {}
    for doc, value in relevance.items():
        position = position_of[doc]
        for offset, share in _NEIGHBOURS:
            other = by_position.get(position + offset)
            if other is not None:
                neighbour[other.id] = neighbour.get(other.id, 0.0) + value * share

    half_life = profile.half_life
    result: dict[int, Scores] = {}
    for item in items:
        rel = relevance.get(item.id, 0.0)
        ent = min(1.0, entity_score.get(item.id, 0.0))
        nb = min(1.0, neighbour.get(item.id, 0.0))
        rec = 0.5 ** (max(0, turn - item.turn) / half_life)
        role = ROLE_WEIGHT[item.memory_role]
        recurrence = _recurrence(item, registry)
        total = (
            WEIGHTS["relevance"] * rel
            + WEIGHTS["entities"] * ent
            + WEIGHTS["neighbour"] * nb
            + WEIGHTS["recency"] * rec
            + WEIGHTS["role"] * role
            + WEIGHTS["recurrence"] * recurrence
        )
        result[item.id] = Scores(rel, ent, nb, rec, role, recurrence, total)
    return result


def _recurrence(item: Item, registry: EntityRegistry) -> float:
    if not item.mentions:
        return 0.0
    total = 0.0
    for mention in item.mentions:
        record = registry.records.get(mention.ref)
        seen = len(record.turns) if record is not None else 1
        total += min(1.0, (seen - 1) / (RECURRENCE_TURNS - 1))
    return total / len(item.mentions)
