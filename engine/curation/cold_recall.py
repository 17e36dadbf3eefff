"""Recall across the whole session: messages before a long session's curated cut, read from the store.

A session longer than its curated limit keeps only its latest messages in memory (see
:mod:`engine.curation.session_curations`); the earlier ones stay in the store. Before planning, the
earlier messages that best match the new message's words are read from the store with their
neighbours (:class:`ColdRecall`, the turn's I/O) and planned like pruned items, scored with the same
parts, their words weighed by how rare they are in the whole store: recalled when the new message
refers to them or to a message beside them, as fits the budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

from engine.chat import StoredMessage
from engine.curation.cold_store import ColdStore
from engine.curation.index import EntityIndex, TermIndex, bm25_idf
from engine.curation.items import Item, ItemState, id_label
from engine.curation.operations import Operation, OpKind
from engine.curation.plan_draft import PlanDraft
from engine.curation.prompt import in_conversation
from engine.curation.result import preview
from engine.curation.scoring import (
    ADJACENT_SHARE,
    MIN_NEIGHBOUR_SOURCE,
    SECOND_SHARE,
    OutsideScore,
    ScoreTable,
)
from engine.protocols.models import TokenCounter
from engine.text.analysis import ANALYSIS_VERSION, Analysis, analyse_text
from engine.text.terms import term, words
from engine.text.thinking import sent_text

if TYPE_CHECKING:
    from engine.curation.session_curation import SessionCuration

QUERY_WORDS = 12
"""The most words of the new message the store is asked about: its entities' words first, then
the rarest in the curated part."""
ASK_SHARE = 0.05
"""The store is asked about a word in at most this share of the curated messages: the curated part
answers a commoner one, and in a long session the store would rank tens of thousands of matches."""
MIN_BEGINNING = 4
"""A word's stem shorter than this is asked for as the whole word, not as a beginning."""
CANDIDATES = 32
"""The most earlier messages found by their words for one request, each read with its neighbours."""
REACH = 2
"""Messages read on either side of each one found: the question before an answer and the answer
after a question get the neighbour credit curated messages get (engine.curation.scoring)."""
ENTITY_SHARE = 0.5
"""Entity overlap (rarity share) that counts as the new message naming an item (as in-memory)."""
APART = 3
"""Positions between two messages that do not follow one another: no neighbour credit passes."""


def query_words(new: Item, index: TermIndex, not_names: AbstractSet[str]) -> dict[str, str]:
    """The words of ``new`` that carry meaning (a stemmed term) and are not common in the curated
    part (indexed by ``index``), at most :data:`QUERY_WORDS`, each with its term: its entities'
    words first (not those of ``not_names``, refs the conversation writes as words), then the
    rarest; a stem that begins its word stands for the word (it finds "painted" for "paint")."""
    entity_words = {
        w for mention in new.mentions if mention.ref not in not_names for w in words(mention.label)
    }
    common = max(1, int(len(index) * ASK_SHARE))
    found: dict[str, tuple[bool, int, str]] = {}
    for word in words(new.text):
        stemmed = term(word)
        if stemmed is None or index.frequency(stemmed) > common:
            continue
        asked = stemmed if word.startswith(stemmed) and len(stemmed) >= MIN_BEGINNING else word
        if asked not in found:
            found[asked] = (word not in entity_words, index.frequency(stemmed), stemmed)
    chosen = sorted(found, key=lambda w: (found[w], w))[:QUERY_WORDS]
    return {asked: found[asked][2] for asked in chosen}


@dataclass(frozen=True, slots=True)
class ColdCandidates:
    """The messages read from before a long session's cut for one request, and how rare the new
    message's words are in the whole store (their IDF): the curated part's rarity would over-rate a
    name it never mentions that fills the earlier part."""

    items: Sequence[Item] = ()
    idf: Mapping[str, float] = field(default_factory=dict)


NONE = ColdCandidates()
"""No earlier message for this request."""


def cold_items(
    runs: Sequence[Sequence[StoredMessage]],
    counter: TokenCounter,
    analyses: Mapping[int, Analysis] | None = None,
) -> list[Item]:
    """Items for runs of messages read from before the cut (pruned: not sent unless recalled),
    placed before every curated item, in conversation order; messages that follow one another sit
    side by side, others :data:`APART`. Their stored ``analyses`` spare reading them again."""
    follows: dict[int, int] = {}
    shown: dict[int, StoredMessage] = {}
    for run in runs:
        kept = [m for m in run if in_conversation(m)]
        shown.update((m.id, m) for m in kept)
        follows.update((later.id, earlier.id) for earlier, later in pairwise(kept))
    ordered = sorted(shown.values(), key=lambda m: m.id)
    positions: list[int] = []
    for at, message in enumerate(ordered):
        step = 1 if at and follows.get(message.id) == ordered[at - 1].id else APART
        positions.append(positions[-1] + step if positions else 0)
    last = positions[-1] if positions else 0
    items = []
    for message, at in zip(ordered, positions, strict=True):
        text = sent_text(message.role, message.content)
        stored = analyses.get(message.id) if analyses is not None else None
        analysis = stored or analyse_text(text)
        items.append(
            Item(
                id=message.id,
                role=message.role,
                held_text=text,
                tokens=message.tokens if message.tokens is not None else counter.count(message.sent_text),
                turn=1,
                position=at - last - 1,
                label=id_label(message.id),
                mentions=() if message.is_digest else analysis.mentions,
                terms=analysis.terms,
                memory_role=analysis.memory_role,
                state=ItemState.PRUNED,
                preview=preview(text),
            )
        )
    return items


def neighbour_credit(cold: Sequence[Item], relevance: Mapping[int, float]) -> dict[int, float]:
    """Each earlier message's credit (at most 1) for sitting next to relevant ones, with the shares
    curated messages get (engine.curation.scoring)."""
    at = {i.position: r for i in cold if (r := relevance.get(i.id, 0.0)) >= MIN_NEIGHBOUR_SOURCE}
    credit: dict[int, float] = {}
    for item in cold:
        p = item.position
        near = ADJACENT_SHARE * (at.get(p - 1, 0.0) + at.get(p + 1, 0.0))
        value = near + SECOND_SHARE * (at.get(p - 2, 0.0) + at.get(p + 2, 0.0))
        if value:
            credit[item.id] = min(1.0, value)
    return credit


def admit(
    cold: ColdCandidates,
    scores: ScoreTable,
    *,
    term_index: TermIndex,
    entity_index: EntityIndex,
    new_refs: frozenset[str],
    threshold: float,
) -> list[Item]:
    """The earlier messages the new message refers to (wording at ``threshold`` of the best
    relevance, a rare shared entity) or that sit next to one it refers to, scored into ``scores``
    as curated ones are, the best first: as many are sent as the budget fits, as for curated ones."""
    score = term_index.score_outside
    raw = {item.id: score(scores.query, item.terms or {}, cold.idf) for item in cold.items}
    top = max(scores.top, *raw.values(), 0.0)
    scores.rescale(top)
    relevance = {key: value / top if top > 0 else 0.0 for key, value in raw.items()}
    neighbour = neighbour_credit(cold.items, relevance)
    scale = entity_index.max_rarity()
    scored: list[OutsideScore] = []
    for item in cold.items:
        shared = sum(entity_index.rarity(ref) / scale for ref in item.refs & new_refs)
        near = neighbour.get(item.id, 0.0)
        if relevance[item.id] >= threshold or shared >= ENTITY_SHARE or near >= threshold:
            scored.append(OutsideScore(item, relevance[item.id], shared, near))
    scored.sort(key=lambda s: (s.relevance + s.neighbour, s.entities, s.item.id), reverse=True)
    scores.add_outside(scored)
    return [s.item for s in scored]


@dataclass(frozen=True, slots=True)
class ColdRecall:
    """Reads the candidates for a request from the store (the turn's I/O, before planning)."""

    store: ColdStore
    counter: TokenCounter

    def candidates(
        self,
        session_id: int,
        upto: int,
        new: Item,
        index: TermIndex,
        not_names: AbstractSet[str],
    ) -> ColdCandidates:
        """The earlier messages (ids up to ``upto``) that may answer ``new``, with their neighbours:
        none when it has no word that carries meaning and is not common in the curated part."""
        asked = query_words(new, index, not_names)
        if not asked:
            return NONE
        found = self.store.earlier_matches(session_id, upto=upto, words=list(asked), limit=CANDIDATES)
        if not found:
            return NONE
        runs = self.store.earlier_around(session_id, [m.id for m in found], upto=upto, reach=REACH)
        analyses = self.store.analyses_of(session_id, ANALYSIS_VERSION, [m.id for run in runs for m in run])
        total, counts = self.store.word_documents(list(asked))
        idf = {stemmed: bm25_idf(total, count) for stemmed, count in zip(asked.values(), counts, strict=True)}
        return ColdCandidates(cold_items(runs, self.counter, analyses), idf)


def earlier_candidates(
    store: ColdStore | None, counter: TokenCounter, session_id: int, curation: SessionCuration, new: Item
) -> ColdCandidates:
    """The messages before ``curation``'s cut that may answer ``new``: none for a session curated
    whole, or with no store to read them from."""
    if store is None or curation.cut is None:
        return NONE
    return ColdRecall(store, counter).candidates(
        session_id, curation.cut.after, new, curation.term_index, curation.registry.words
    )


def recall_earlier(draft: PlanDraft, scores: ScoreTable, threshold: float, already: set[int]) -> None:
    """The reasons and operations of the earlier messages ``draft`` sends: each recall logged when
    the message comes back (not when it was already recalled by the last plan, ``already``)."""
    for item in draft.cold:
        if item.id not in draft.chosen:
            continue
        if scores.relevance_of(item.id) >= threshold:
            why = "the new message is about the same thing (wording)"
        elif scores[item.id].entities >= ENTITY_SHARE:
            why = "the new message refers to what it mentions"
        else:
            why = "it sits next to a message the new message is about"
        reason = draft.recall_reasons[item.id] = f"{why}; read from the messages before the curated ones"
        if item.id not in already:
            draft.operations.append(
                Operation(OpKind.RECALL, item.id, reason, draft.turn, scores=scores[item.id], reversible=True)
            )
