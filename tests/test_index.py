"""The term index ranks messages by BM25: exactly, for any message ids and however often a word repeats."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from engine.curation.index import TermIndex

WORDS = st.sampled_from(["deploy", "port", "retry", "lentils", "garden", "cache", "invoice"])
DOCS = st.lists(st.dictionaries(WORDS, st.integers(1, 5), min_size=1), min_size=1, max_size=30)


def reference_bm25(docs: dict[int, dict[str, int]], query: dict[str, float]) -> dict[int, float]:
    """Okapi BM25 written out plainly, with the index's rule for terms in most documents."""
    k1, b = 1.2, 0.75
    n = len(docs)
    average = sum(sum(d.values()) for d in docs.values()) / n
    result: dict[int, float] = {}
    for term, weight in query.items():
        having = [doc for doc, terms in docs.items() if term in terms]
        if not having or len(having) > n * TermIndex.COMMON_SHARE:
            continue
        idf = math.log(1 + (n - len(having) + 0.5) / (len(having) + 0.5))
        for doc in having:
            tf, length = docs[doc][term], sum(docs[doc].values())
            value = tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
            result[doc] = result.get(doc, 0.0) + idf * weight * value
    return result


IDS = st.lists(st.integers(-(2**40), 2**40), min_size=30, max_size=30, unique=True)
"""Message ids: any, as a store or an import may give (a term's ids widen past 32 bits)."""


@given(DOCS, IDS, st.dictionaries(WORDS, st.floats(0.1, 3.0), min_size=1))
def test_scores_are_exact_bm25(docs: list[dict[str, int]], ids: list[int], query: dict[str, float]) -> None:
    # Most terms are first in one document, then in more: both ways of keeping them are checked.
    index = TermIndex()
    numbered = dict(zip(ids, docs, strict=False))
    for doc, terms in numbered.items():
        index.add(doc, terms)
    expected = reference_bm25(numbered, query)
    got = index.scores(query)
    assert got.keys() == expected.keys()
    for doc, score in expected.items():
        assert math.isclose(got[doc], score, rel_tol=1e-9)


def test_message_ids_beyond_32_bits_or_below_zero_are_indexed_like_any_other() -> None:
    # Ids are stored in 4 bytes where they fit; a term that meets a larger one widens, losing nothing.
    index = TermIndex()
    ids = [7, 2**40, -3, 2**33 + 1, 12]
    for doc in ids:
        index.add(doc, {"deploy": 1, f"own{doc}": 2})
    for doc in ids:
        assert set(index.scores({f"own{doc}": 1.0})) == {doc}
    plain = TermIndex()
    for n in range(len(ids)):
        plain.add(n, {"deploy": 1, f"own{n}": 2})
    assert index.scores({"own7": 1.0})[7] == plain.scores({"own0": 1.0})[0]


def test_a_word_pasted_a_million_times_ranks_its_message_first() -> None:
    index = TermIndex()
    index.add(1, {"invoice": 1_000_000, "total": 3})
    index.add(2, {"invoice": 2, "total": 1})
    index.add(3, {"garden": 4})
    scores = index.scores({"invoice": 1.0})
    assert scores[1] > scores[2] > 0


def _postings_bytes(index: TermIndex) -> int:
    """What the index's postings arrays take (their buffers, not the Python objects around them)."""
    total = 0
    for found in index._postings.values():
        if not isinstance(found, int):
            total += sum(column.buffer_info()[1] * column.itemsize for column in found)
    return total


def test_a_long_sessions_postings_take_three_bytes_each_not_six() -> None:
    # 10,000 messages sharing 50 words each: 500,000 postings. Ids are a store's (large); the
    # index numbers documents itself, so a posting is a 2-byte number and a 1-byte count.
    index = TermIndex()
    for n in range(10_000):
        index.add(1_000_000 + n, {f"w{(n + k) % 200}": 1 + k % 3 for k in range(50)})
    assert _postings_bytes(index) <= 3 * 500_000
    assert set(index.scores({"w7": 1.0})) == {1_000_000 + n for n in range(10_000) if (7 - n) % 200 < 50}


def test_past_65535_messages_and_255_repeats_the_scores_stay_exact() -> None:
    # Document numbers and counts widen when they outgrow 2 bytes and 1 byte.
    index = TermIndex()
    docs: dict[int, dict[str, int]] = {}
    for n in range(70_000):
        terms = {"common": 1, f"w{n % 7}": 1 + n % 300} if n % 1000 else {"rare": 400, "common": 1}
        docs[-n] = terms
        index.add(-n, terms)
    query = {"rare": 1.0, "w3": 0.5}
    expected = reference_bm25(docs, query)
    got = index.scores(query)
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[doc], score, rel_tol=1e-9) for doc, score in expected.items())
