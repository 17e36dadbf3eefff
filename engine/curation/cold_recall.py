"""Recall across the whole session: messages before a long session's curated cut, read from the store.

A session longer than its curated limit keeps only its latest messages in memory (see
:mod:`engine.curation.session_curations`); the earlier ones stay in the store. When the new message names
something the curated part hardly knows (its rare words, its entities), a few of the earlier
messages that contain it are read from the store before planning (:class:`ColdRecall`, the turn's
I/O) and planned like pruned items: recalled when the new message refers to them directly (the
same test as in-memory recall) and when they fit the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.chat import StoredMessage
from engine.curation.cold_store import ColdStore
from engine.curation.index import EntityIndex, TermIndex
from engine.curation.items import Item, ItemState
from engine.curation.operations import Operation, OpKind
from engine.curation.plan_draft import PlanDraft
from engine.curation.prompt import in_conversation
from engine.curation.result import preview
from engine.curation.scoring import ScoreTable
from engine.protocols.models import TokenCounter
from engine.text.analysis import analyse_text
from engine.text.terms import term, words
from engine.text.thinking import sent_text

QUERY_WORDS = 8
"""The most words of the new message the store is asked about."""
RARE_SHARE = 0.005
"""A word points before the cut when its term is in at most this share of the curated messages
(at least one): a word the curated part uses often is answered there, and asking the store about
it would match thousands of earlier messages for nothing."""
CANDIDATES = 8
"""The most earlier messages read from the store for one request."""
RECALLS = 3
"""The most earlier messages one request recalls."""
ENTITY_SHARE = 0.5
"""Entity overlap (rarity share) that counts as the new message naming an item (as in-memory)."""


def query_words(new: Item, index: TermIndex) -> list[str]:
    """The words of ``new`` that the curated part (indexed by ``index``) hardly has: its entities'
    words first, then the rarest, at most :data:`QUERY_WORDS`; none when every word is common."""
    entity_words = {w for mention in new.mentions for w in words(mention.label)}
    rare = max(1, int(len(index) * RARE_SHARE))
    found: dict[str, tuple[bool, int]] = {}
    for word in words(new.text):
        stemmed = term(word)
        if stemmed is None or word in found:
            continue
        frequency = index.frequency(stemmed)
        if frequency <= rare:
            found[word] = (word not in entity_words, frequency)
    return sorted(found, key=lambda w: (found[w], w))[:QUERY_WORDS]


def cold_items(messages: Sequence[StoredMessage], counter: TokenCounter) -> list[Item]:
    """Items for messages read from before the cut (pruned: not sent unless recalled), placed
    before every curated item, in conversation order."""
    shown = sorted((m for m in messages if in_conversation(m)), key=lambda m: m.id)
    items = []
    for at, message in enumerate(shown):
        text = sent_text(message.role, message.content)
        analysis = analyse_text(text)
        items.append(
            Item(
                id=message.id,
                role=message.role,
                held_text=text,
                tokens=message.tokens if message.tokens is not None else counter.count(message.sent_text),
                turn=1,
                position=at - len(shown),
                label=f"#{message.id}",
                mentions=() if message.is_digest else analysis.mentions,
                terms=analysis.terms,
                memory_role=analysis.memory_role,
                state=ItemState.PRUNED,
                preview=preview(text),
            )
        )
    return items


def admit(
    cold: Sequence[Item],
    scores: ScoreTable,
    *,
    term_index: TermIndex,
    entity_index: EntityIndex,
    new_refs: frozenset[str],
    threshold: float,
) -> list[Item]:
    """The earlier messages the new message refers to directly (wording at ``threshold`` of the
    best relevance, or a rare shared entity), scored into ``scores``; the best
    :data:`RECALLS` first."""
    raw = {item.id: term_index.score_outside(scores.query, item.terms or {}) for item in cold}
    top = max(scores.top, *raw.values(), 0.0)
    scale = entity_index.max_rarity()
    scored: list[tuple[Item, float, float]] = []
    for item in cold:
        relevance = raw[item.id] / top if top > 0 else 0.0
        shared = sum(entity_index.rarity(ref) / scale for ref in item.refs & new_refs)
        if relevance >= threshold or shared >= ENTITY_SHARE:
            scored.append((item, relevance, shared))
    scored.sort(key=lambda s: (s[1], s[2], s[0].id), reverse=True)
    scored = scored[:RECALLS]
    scores.add_outside(scored)
    return [item for item, _, _ in scored]


@dataclass(frozen=True, slots=True)
class ColdRecall:
    """Reads the candidates for a request from the store (the turn's I/O, before planning)."""

    store: ColdStore
    counter: TokenCounter

    def candidates(self, session_id: int, upto: int, new: Item, index: TermIndex) -> list[Item]:
        """The earlier messages (ids up to ``upto``) that may answer ``new``: none when it has no
        word the curated part hardly knows."""
        asked = query_words(new, index)
        if not asked:
            return []
        found = self.store.earlier_matches(session_id, upto=upto, words=asked, limit=CANDIDATES)
        return cold_items(found, self.counter)


def recall_earlier(draft: PlanDraft, scores: ScoreTable, threshold: float, already: set[int]) -> None:
    """The reasons and operations of the earlier messages ``draft`` sends: each recall logged when
    the message comes back (not when it was already recalled by the last plan, ``already``)."""
    for item in draft.cold:
        if item.id not in draft.chosen:
            continue
        why = (
            "the new message is about the same thing (wording)"
            if scores.relevance_of(item.id) >= threshold
            else "the new message refers to what it mentions"
        )
        reason = draft.recall_reasons[item.id] = f"{why}; read from the messages before the curated ones"
        if item.id not in already:
            draft.operations.append(
                Operation(OpKind.RECALL, item.id, reason, draft.turn, scores=scores[item.id], reversible=True)
            )
