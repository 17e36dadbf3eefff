"""Recall by meaning: dense similarity joined to lexical relevance, item vectors computed once, and
the reason the panel and the why dialog give for an item recalled for its meaning."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.curation.consent import ConsentChoice
from engine.curation.context_building import build_view
from engine.curation.context_view import ItemDetail
from engine.curation.dense import DenseIndex, Similarities, combine
from engine.curation.session_curation import SessionCuration
from engine.protocols.embeddings import Vectors
from engine.text.tokens import load_counter
from tui.screens.inspect import describe

COUNTER = load_counter("", model_is_offline=True)

CONCEPTS = {
    "kitten": 0,
    "feline": 0,
    "cat": 0,
    "sister": 1,
    "sibling": 1,
    "adopted": 2,
    "take": 2,
}
"""Words the fake model places together: synonyms share a dimension, as a real model's do."""


class ConceptEmbedder:
    """Deterministic vectors: a word's concept dimension, or one of 56 others from its hash."""

    name = "concepts"

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                concept = CONCEPTS.get(word)
                column = concept if concept is not None else 8 + zlib.crc32(word.encode()) % 56
                vectors[row, column] += 3.0 if concept is not None else 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors


SHARES = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.dictionaries(st.integers(0, 50), SHARES, max_size=20))
def test_with_no_dense_input_relevance_is_unchanged(relevance: dict[int, float]) -> None:
    assert combine(relevance, None) == relevance
    assert combine(relevance, Similarities((), np.zeros(0, dtype=np.float32))) == relevance


@settings(max_examples=300)
@given(
    st.dictionaries(st.integers(0, 30), SHARES, max_size=20),
    st.lists(st.floats(min_value=-1.0, max_value=1.0, allow_nan=False, width=32), max_size=30),
)
def test_relevance_stays_between_0_and_1(relevance: dict[int, float], similarities: list[float]) -> None:
    dense = Similarities(list(range(len(similarities))), np.array(similarities, dtype=np.float32))
    combined = combine(relevance, dense)
    assert all(0.0 <= value <= 1.0 for value in combined.values())
    assert set(relevance) <= set(combined)


def test_an_item_with_no_shared_words_but_close_meaning_gains() -> None:
    relevance = {1: 1.0, 2: 0.4}  # item 3 shares no word with the new message
    dense = Similarities([1, 2, 3, 4, 5], np.array([0.1, 0.2, 0.9, 0.0, 0.05], dtype=np.float32))
    combined = combine(relevance, dense)
    assert combined[3] == pytest.approx(0.5)  # the closest in meaning: half the best match by words
    assert combined[3] > combined[2] and combined[1] == 1.0  # words still lead
    assert 4 not in combined and 5 not in combined  # below the median: nothing gained


def test_each_item_is_embedded_once_and_ten_thousand_are_measured_in_one_product() -> None:
    curation = SessionCuration(window=1000, counter=COUNTER)
    items = [
        curation.add_message(n, "user", f"message number {n} about topic {n % 7}", 8) for n in range(10_000)
    ]
    embedder = ConceptEmbedder()
    index = DenseIndex(embedder)
    first = index.similarities("topic 3", items)
    assert len(embedder.embedded) == 10_001  # every item, and the query
    second = index.similarities("topic 4", items[::-1])
    assert len(embedder.embedded) == 10_002  # only the new query this time
    assert list(second.ids) == [i.id for i in items[::-1]]
    assert np.allclose(second.values[::-1][:5], index.similarities("topic 4", items[:5]).values)
    assert len(first.values) == 10_000


def recalled_by_meaning() -> tuple[SessionCuration, int, ItemDetail]:
    """A pruned message about a kitten, and a later question that names it only by synonyms."""
    curation = SessionCuration(window=1000, counter=COUNTER, policy=ConsentChoice.REMOVE)
    curation.state.dense = DenseIndex(ConceptEmbedder())
    fillers = (
        "The deploy script needs a retry around the database migration step.",
        "Schedule the budget review for the finance team on Thursday.",
        "The hiking trail was muddy after the storm, so bring boots.",
        "The laptop battery drains quickly at full screen brightness.",
    )
    texts = ["My sister adopted a little kitten from the shelter last spring."]
    texts += [f"{fillers[n % 4]} Note {n}." for n in range(40)]
    evidence = -1
    for n, text in enumerate(texts):
        user = curation.add_message(2 * n + 1, "user", text, COUNTER.count(text))
        evidence = user.id if n == 0 else evidence
        curation.add_message(2 * n + 2, "assistant", f"Understood: {text}", COUNTER.count(text) + 2)
        curation.apply(curation.plan(user))
    assert curation.by_id[evidence].state.value == "pruned"
    question = "Which feline did my sibling take in?"
    new = curation.add_message(999, "user", question, COUNTER.count(question))
    result = curation.plan(new)
    view = build_view(curation, result, new_id=new.id).item(evidence)
    assert view is not None
    detail = ItemDetail(
        view=view,
        text=texts[0],
        summary=None,
        memory_role="context",
        scores=result.scores.get(evidence),
        ledger=(),
    )
    return curation, evidence, detail


def test_a_message_recalled_for_its_meaning_says_so_in_the_why_dialog() -> None:
    curation, evidence, detail = recalled_by_meaning()
    assert detail.view.reason == "recalled: close in meaning to your message"
    assert "In the next request: " in describe(detail)
    assert "recalled: close in meaning to your message" in describe(detail)
    # Without embeddings, the same question recalls nothing by its words.
    curation.state.dense = None
    new = curation.by_id[999]
    assert evidence not in {s for m in curation.plan(new).messages for s in m.sources}


def test_a_message_recalled_for_its_words_keeps_its_reason() -> None:
    curation, evidence, _ = recalled_by_meaning()
    question = "What about the kitten my sister adopted from the shelter?"
    new = curation.add_message(1001, "user", question, COUNTER.count(question))
    view = build_view(curation, curation.plan(new), new_id=new.id).item(evidence)
    assert view is not None
    assert view.reason == "recalled: the new message is about the same thing (wording)"


def test_a_local_model_that_cannot_load_leaves_words_alone_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import providers.local_embedder
    from tests.apphelpers import loaded_engine

    def broken() -> None:
        raise OSError("weights unreadable")

    monkeypatch.setattr(providers.local_embedder, "load_local_embedder", broken)
    with loaded_engine('embeddings = "local"\n') as (_, engine):
        assert engine.turns.curations.meaning is None
        assert [n.severity for n in engine.notices] == ["warning"]
        assert "Recall by meaning is off" in engine.notices[0].text
        assert "weights unreadable" in engine.notices[0].text
