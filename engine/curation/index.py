"""Incremental indexes over a session's items: BM25 for words, and an entity index.

Both grow by one item at a time, so a turn's scoring costs the postings of the query's terms, not a
pass over every word of the history.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from typing import TypeAlias

MAX_COUNT = 0xFFFF
"""Counts beyond this are stored as this: BM25 saturates long before (tf 65,535 and 1,000,000 weigh
within 0.01% of each other)."""


def bm25_idf(documents: int, frequency: int) -> float:
    """BM25's weight (IDF) of a term that ``frequency`` of ``documents`` documents have: the one
    formula for the index, the store's counts (cold recall) and the story's earlier messages."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


_Columns: TypeAlias = "tuple[array[int], array[int]]"
"""A term's postings: the numbers of the documents that have it, and how often each does."""


class TermIndex:
    """Okapi BM25 over stemmed terms, updated one document at a time.

    Each document is numbered in the order it was added, and postings name documents by number:
    arrays of 2-byte numbers (wider only past 65,535 documents) and 1-byte counts (wider only for
    a term a document repeats more than 255 times), side by side, not dicts; a posting takes 3
    bytes, not the 6 of an id and a count. A term found in one document only (two in five of a
    real conversation's terms: names, numbers, paths, hashes) is one int packing its number and
    count until a second document has it. Each posting's length-normalised term weight is cached
    per term, so a query costs one multiply-add per posting. The weights use the average document
    length at the time they were cached; all caches are dropped when that average drifts by more
    than ``REWEIGH_DRIFT``, which keeps the scores within a fraction of a percent of exact BM25 at
    amortised constant cost.
    """

    REWEIGH_DRIFT = 0.02
    MAX_QUERY_TERMS = 32
    """Only the query's most informative (rarest) terms are looked up: a long message or a paste
    would otherwise walk most of the index, for terms that barely move the ranking."""
    COMMON_SHARE = 0.9
    """Query terms found in more than this share of documents are skipped."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._postings: dict[str, int | _Columns] = {}
        """Term → (document numbers, counts), in the order the documents were added; or the one
        document's number and count packed (``number << 16 | count``)."""
        self._numbers: dict[int, int] = {}
        """Document id → its number (the order it was added in)."""
        self._ids: array[int] = array("q")
        """Document number → its id."""
        self._lengths: array[int] = array("q")
        """Document number → its length in terms."""
        self._total_length = 0
        self._weights: dict[str, array[float]] = {}
        """Term → cached weights, parallel to its postings' document numbers."""
        self._weights_average = 0.0

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, doc: int, terms: Mapping[str, int]) -> None:
        """Index a document (an item id) by its term counts; adding the same id twice is an error."""
        if doc in self._numbers:
            raise ValueError(f"document {doc} is already indexed")
        length = sum(terms.values())
        number = self._numbers[doc] = len(self._ids)
        self._ids.append(doc)
        self._lengths.append(length)
        self._total_length += length
        postings = self._postings
        weights = self._weights
        for term, tf in terms.items():
            count = min(tf, MAX_COUNT)
            found = postings.get(term)
            if found is None:
                postings[term] = number << 16 | count
                continue
            if isinstance(found, int):
                found = postings[term] = _unpacked(found)
            try:
                found[0].append(number)
                found[1].append(count)
            except OverflowError:
                postings[term] = _widened(found, number, count)
            if weights and term in weights:
                weights[term].append(self._weight(count, length, self._weights_average))

    def idf(self, term: str) -> float:
        return bm25_idf(len(self._ids), self.frequency(term))

    def frequency(self, term: str) -> int:
        """How many indexed documents have ``term``."""
        found = self._postings.get(term)
        return _frequency(found) if found is not None else 0

    def documents_with(self, term: str) -> Sequence[int]:
        """The indexed documents that have ``term``."""
        found = self._postings.get(term)
        if found is None:
            return ()
        ids = self._ids
        return [ids[number] for number in _columns(found)[0]]

    def score_outside(
        self, query: Mapping[str, float], terms: Mapping[str, int], idf: Mapping[str, float]
    ) -> float:
        """The BM25 score a document of ``terms`` that is not indexed (a message before a long
        session's cut) would have for ``query``, on the scale of :meth:`scores`; a term's ``idf``
        where given (measured beyond the index), else the index's."""
        n = len(self._ids)
        average = (self._total_length / n if n else 0.0) or 1.0
        length = sum(terms.values())
        total = 0.0
        for term, weight in query.items():
            tf = terms.get(term)
            if not tf or weight <= 0:
                continue
            rarity = idf.get(term)
            if rarity is None:
                if self.frequency(term) > n * self.COMMON_SHARE:
                    continue
                rarity = self.idf(term)
            total += rarity * weight * self._weight(min(tf, MAX_COUNT), length, average)
        return total

    def scores(self, query: Mapping[str, float]) -> dict[int, float]:
        """BM25 score of every document that shares a term with ``query`` (term → weight)."""
        if not self._ids:
            return {}
        average = self._total_length / len(self._ids) or 1.0
        if abs(average - self._weights_average) > self.REWEIGH_DRIFT * average:
            self._weights = {}
            self._weights_average = average
        result: dict[int, float] = {}
        get = result.get
        common = len(self._ids) * self.COMMON_SHARE
        postings = self._postings
        known = [term for term, weight in query.items() if weight > 0 and term in postings]
        if len(known) > self.MAX_QUERY_TERMS:
            known.sort(key=lambda t: (_frequency(postings[t]) / query[t], t))
            del known[self.MAX_QUERY_TERMS :]
        for term in known:
            weight = query[term]
            docs, _ = _columns(postings[term])
            if len(docs) > common:
                # In most documents: it tells them apart little (IDF < 0.11) and costs the most.
                continue
            idf = self.idf(term) * weight
            for number, value in zip(docs, self._term_weights(term), strict=True):
                result[number] = get(number, 0.0) + idf * value
        ids = self._ids
        return {ids[number]: score for number, score in result.items()}

    def _weight(self, tf: int, length: int, average: float) -> float:
        k1 = self._k1
        return tf * (k1 + 1) / (tf + k1 * (1 - self._b + self._b * length / average))

    def _term_weights(self, term: str) -> array[float]:
        cached = self._weights.get(term)
        if cached is None:
            docs, counts = _columns(self._postings[term])
            average, lengths = self._weights_average, self._lengths
            cached = array(
                "d",
                (self._weight(tf, lengths[number], average) for number, tf in zip(docs, counts, strict=True)),
            )
            self._weights[term] = cached
        return cached


def _unpacked(packed: int) -> _Columns:
    """A one-document term's packed posting as the arrays a second document is added to."""
    columns = (array("H"), array("B"))
    try:
        columns[0].append(packed >> 16)
        columns[1].append(packed & MAX_COUNT)
    except OverflowError:
        return _widened(columns, packed >> 16, packed & MAX_COUNT)
    return columns


def _widened(columns: _Columns, number: int, count: int) -> _Columns:
    """``columns`` with the posting that did not fit them added, in wider arrays: past 65,535
    documents (or 4 billion) for the number, past 255 for the count. The number may be in
    ``columns`` already (only the count did not fit)."""
    docs, counts = columns
    if len(docs) == len(counts):  # the number did not fit
        docs = array("I" if docs.typecode == "H" and number <= 0xFFFFFFFF else "q", docs)
        docs.append(number)
    try:
        counts.append(count)
    except OverflowError:
        counts = array("H", counts)
        counts.append(count)
    return docs, counts


def _columns(found: int | _Columns) -> tuple[Sequence[int], Sequence[int]]:
    """A term's postings as (document numbers, counts), packed or not."""
    if isinstance(found, int):
        return (found >> 16,), (found & MAX_COUNT,)
    return found


def _frequency(found: int | _Columns) -> int:
    """How many documents have the term."""
    return 1 if isinstance(found, int) else len(found[0])


_NONE: Sequence[int] = ()


class EntityIndex:
    """Which items mention each entity ref, in the order they were added.

    Kept in arrays of ids, not sets: a long session names thousands of entities, most of them in
    one or two items, and a set costs 216 bytes at least.
    """

    def __init__(self) -> None:
        self._items: dict[str, array[int]] = {}
        self._count = 0

    def add(self, doc: int, refs: frozenset[str]) -> None:
        """Index a document (an item id, added once) by the entities it mentions."""
        self._count += 1
        items = self._items
        for ref in refs:
            found = items.get(ref)
            if found is None:
                items[ref] = array("q", (doc,))
            else:
                found.append(doc)

    def items_with(self, ref: str) -> Sequence[int]:
        return self._items.get(ref, _NONE)

    def max_rarity(self) -> float:
        """The rarity of an entity found in one item only."""
        return math.log(1 + (self._count + 1) / 2)

    def rarity(self, ref: str) -> float:
        """An IDF-like weight: an entity in every message says little about any one of them."""
        df = len(self._items.get(ref, ()))
        return math.log(1 + (self._count + 1) / (df + 1))
