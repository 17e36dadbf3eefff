"""Summaries: a short stand-in for an item that keeps what matters and names its source.

The offline summarizer here is extractive and deterministic: it keeps, verbatim, the sentences that
carry events (decisions, errors, numbers, preferences, dates), and appends every entity of the source
that those sentences do not already contain, so no entity is ever lost. An LLM summarizer can
replace it behind :class:`Summarizer`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from engine.curation.items import Item
from engine.entities.mentions import Mention

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
"""A sentence ends at . ! or ? followed by space, or at a line break: "auth.py:42" stays whole."""
_EVENT = re.compile(
    r"\d|\b(decided|decision|let'?s|will|error|exception|fail\w*|because|fixed|prefer|like|love|hate|want"
    r"|need|always|never|must|should|deadline|plan)\b",
    re.I,
)
MAX_SOURCE_CHARS = 20_000
"""Only the opening of a giant item is read for sentences (its entities are still all kept)."""
MAX_RANKING_MENTIONS = 200
"""Sentences are ranked by the item's first this-many entities (in order of appearance, so those
of the opening that is read): ranking by all of them costs sentences × entities."""


class Summarizer(Protocol):
    def summarize(self, item: Item) -> str:
        """A summary of ``item`` that contains every entity label of the item."""
        ...


def _sentences(text: str) -> list[str]:
    seen: set[str] = set()
    unique = []
    for sentence in _SENTENCE_END.split(text[:MAX_SOURCE_CHARS]):
        sentence = sentence.strip()
        if sentence and sentence not in seen:
            seen.add(sentence)
            unique.append(sentence)
    return unique


def _weight(sentence: str, mentions: Sequence[Mention]) -> int:
    # Events (decisions, errors, numbers, preferences) first; entities break ties.
    entities = sum(1 for m in mentions if m.label in sentence)
    return (10 if _EVENT.search(sentence) else 0) + entities


class ExtractiveSummarizer:
    """Keeps event sentences verbatim, up to ``max_ratio`` of the source, then lists missing entities."""

    def __init__(self, *, max_ratio: float = 0.3, max_chars: int = 600) -> None:
        self._max_ratio = max_ratio
        self._max_chars = max_chars

    def summarize(self, item: Item) -> str:
        sentences = _sentences(item.text)
        limit = max(80, min(self._max_chars, int(len(item.text) * self._max_ratio)))
        ranking = item.mentions[:MAX_RANKING_MENTIONS]
        weights = [_weight(sentence, ranking) for sentence in sentences]
        ranked = sorted(range(len(sentences)), key=lambda i: (-weights[i], i))
        chosen: list[int] = []
        used = 0
        for index in ranked:
            sentence = sentences[index]
            if chosen and (used + len(sentence) > limit or weights[index] == 0):
                continue
            chosen.append(index)
            used += len(sentence) + 1
        kept = " ".join(_shorten(sentences[i], limit) for i in sorted(chosen))
        missing = [m.label for m in item.mentions if m.label not in kept]
        if missing:
            kept = (
                f"{kept} (also mentions: {', '.join(missing)})" if kept else f"Mentions: {', '.join(missing)}"
            )
        return kept


class PreparedSummaries:
    """Another summarizer's summaries, written ahead for the items a next turn may demote.

    A turn that changes the subject demotes most of the active items at once, and summarizing them
    all took a good part of the turn. An item's text never changes, so its summary can be written
    beforehand, when the next request is previewed (on opening, and after each turn, for the two
    new items). Only the summaries of the items last prepared are kept: those of the active ones.
    """

    def __init__(self, summarizer: Summarizer) -> None:
        self._summarizer = summarizer
        self._ready: dict[int, str] = {}

    def summarize(self, item: Item) -> str:
        ready = self._ready.get(item.id)
        return ready if ready is not None else self._summarizer.summarize(item)

    def prepare(self, items: Iterable[Item]) -> None:
        """Have the summaries of ``items`` ready, and let go of any other's."""
        ready, summarize = self._ready, self._summarizer.summarize
        self._ready = {item.id: ready.get(item.id) or summarize(item) for item in items}


def _shorten(sentence: str, limit: int) -> str:
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut + "…"


def missing_entities(summary: str, mentions: Sequence[Mention]) -> list[Mention]:
    """The mentions whose label does not appear in ``summary`` (a summary must keep them all)."""
    return [m for m in mentions if m.label not in summary]
