"""Keep rules: what the user says must survive ("/keep anything about the database schema").

A rule is its text and its content words (and, with embeddings on, its meaning). An item matches
when it has enough of the rule's content words (:func:`needed`), or is close enough in meaning
(:data:`DENSE_MATCH`); a plan then retains it verbatim while it fits, ahead of ordinary scored
items, with the rule as its reason (see :func:`engine.curation.choosing.choose`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.curation.items import Item
from engine.text.terms import terms

if TYPE_CHECKING:
    from engine.curation.dense import DenseIndex
    from engine.curation.index import TermIndex

MATCH_SHARE = 0.6
"""The share of a rule's content words an item must have (rounded up): all of one or two words,
two of three, three of four."""
DENSE_MATCH = 0.55
"""With embeddings on, an item this close in meaning (cosine) to the rule matches too."""
MAX_RULE_CHARS = 300
"""A rule is a few words; a paste is not a rule."""
FILLER = frozenset(
    terms(
        "anything everything something whatever stuff thing things related relating regarding concerning "
        "mention mentions mentioning message messages keep talk talks discussion topic topics"
    )
)
"""Words of a rule that say how, not what ("anything about ..."): not content words."""


@dataclass(frozen=True, slots=True)
class KeepRule:
    """One rule as the user wrote it, with its content words (stems, no filler)."""

    id: int
    text: str
    terms: frozenset[str]

    @property
    def reason(self) -> str:
        """The reason an item this rule keeps is given (the rule's text, quoted)."""
        return f'kept by your rule "{self.text}"'


def rule(rule_id: int, text: str) -> KeepRule:
    """The rule ``text`` (stored as ``rule_id``) with its content words (none: it matches nothing,
    and ``/keep`` refuses it)."""
    return KeepRule(rule_id, text, frozenset(terms(text)) - FILLER)


def needed(rule: KeepRule) -> int:
    """How many of the rule's content words an item must have to match it."""
    return max(1, math.ceil(len(rule.terms) * MATCH_SHARE))


def matches(
    rules: Sequence[KeepRule],
    candidates: Iterable[Item],
    term_index: TermIndex,
    dense: DenseIndex | None = None,
) -> dict[int, KeepRule]:
    """Each candidate some rule matches, with the first rule that does (candidates the user
    forgot are left to the user's word)."""
    if not rules:
        return {}
    allowed = {i.id: i for i in candidates if not i.forgotten}
    found: dict[int, KeepRule] = {}
    for keep in rules:
        counts: dict[int, int] = {}
        for term in keep.terms:
            for doc in term_index.documents_with(term):
                if doc in allowed:
                    counts[doc] = counts.get(doc, 0) + 1
        need = needed(keep)
        for doc, count in counts.items():
            if count >= need:
                found.setdefault(doc, keep)
        if dense is not None and allowed:
            close = dense.similarities(keep.text, list(allowed.values()))
            for doc, value in zip(close.ids, close.values.tolist(), strict=True):
                if value >= DENSE_MATCH:
                    found.setdefault(doc, keep)
    return found
