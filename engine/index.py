"""Incremental indexes over a session's items: BM25 for words, and an entity index.

Both grow by one item at a time, so a turn's scoring costs the postings of the query's terms, not a
pass over every word of the history.
"""

from __future__ import annotations

import math
from collections.abc import Mapping


class TermIndex:
    """Okapi BM25 over stemmed terms, updated one document at a time."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._lengths: dict[int, int] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, doc: int, terms: Mapping[str, int]) -> None:
        """Index a document (an item id) by its term counts; adding the same id twice is an error."""
        if doc in self._lengths:
            raise ValueError(f"document {doc} is already indexed")
        length = sum(terms.values())
        self._lengths[doc] = length
        self._total_length += length
        for term, count in terms.items():
            self._postings.setdefault(term, {})[doc] = count

    def idf(self, term: str) -> float:
        df = len(self._postings.get(term, ()))
        n = len(self._lengths)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: Mapping[str, float]) -> dict[int, float]:
        """BM25 score of every document that shares a term with ``query`` (term → weight)."""
        if not self._lengths:
            return {}
        average = self._total_length / len(self._lengths) or 1.0
        k1, b = self._k1, self._b
        result: dict[int, float] = {}
        for term, weight in query.items():
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = self.idf(term) * weight
            for doc, tf in postings.items():
                norm = k1 * (1 - b + b * self._lengths[doc] / average)
                result[doc] = result.get(doc, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
        return result


class EntityIndex:
    """Which items mention each entity ref."""

    def __init__(self) -> None:
        self._items: dict[str, set[int]] = {}
        self._count = 0

    def add(self, doc: int, refs: frozenset[str]) -> None:
        self._count += 1
        for ref in refs:
            self._items.setdefault(ref, set()).add(doc)

    def items_with(self, ref: str) -> set[int]:
        return self._items.get(ref, set())

    def max_rarity(self) -> float:
        """The rarity of an entity found in one item only."""
        return math.log(1 + (self._count + 1) / 2)

    def rarity(self, ref: str) -> float:
        """An IDF-like weight: an entity in every message says little about any one of them."""
        df = len(self._items.get(ref, ()))
        return math.log(1 + (self._count + 1) / (df + 1))
