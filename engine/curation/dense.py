"""Dense similarity: how close in meaning each item is to the new message, beside its words.

A :class:`DenseIndex` keeps every item's unit vector from an :class:`Embedder`, computed once per
item when a plan first needs it (plans run in the curation's worker thread), and measures a new
message against all candidates in one matrix product. :func:`combine` adds that to the lexical
relevance: dense similarity alone ranks worse than BM25, the two together better than either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.curation.items import Item
from engine.protocols.embeddings import Embedder, Vectors

DENSE_WEIGHT = 0.5
"""What the candidate closest in meaning adds to its relevance (before relevance is rescaled to a
best of 1): words stay the stronger signal."""
BATCH = 512
"""Texts embedded per call when items are first measured."""


@dataclass(frozen=True, slots=True)
class Similarities:
    """The candidates' cosine similarities to the new message, in the order of ``ids``."""

    ids: Sequence[int]
    values: Vectors


class DenseIndex:
    """Each item's vector (one row of a matrix that grows as items come), by item id."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._rows: dict[int, int] = {}
        self._matrix: Vectors = np.zeros((0, 0), dtype=np.float32)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def similarities(self, query: str, items: Sequence[Item]) -> Similarities:
        """How close ``query`` is to each of ``items`` (their vectors computed first if new)."""
        rows = self._rows
        missing = [i for i in items if i.id not in rows]
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            self._keep([i.id for i in batch], self.embedder.embed([i.text for i in batch]))
        if not items:
            return Similarities((), np.zeros(0, dtype=np.float32))
        vector = self.embedder.embed([query])[0]
        # einsum, not ``@``: OpenBLAS's threads took 8 ms for this product on a busy 2-core
        # machine (and their spinning slowed the rest of the plan); its own loop takes 0.4 ms.
        every = np.einsum("ij,j->i", self._matrix[: self._size], vector)
        at = np.fromiter((rows[i.id] for i in items), dtype=np.intp, count=len(items))
        return Similarities([i.id for i in items], every[at])

    def _keep(self, ids: Sequence[int], vectors: Vectors) -> None:
        size, need = self._size, self._size + len(ids)
        if self._matrix.shape[0] < need or self._matrix.shape[1] != vectors.shape[1]:
            grown = np.zeros((max(need, 2 * self._matrix.shape[0], 64), vectors.shape[1]), dtype=np.float32)
            if self._matrix.shape[1] == vectors.shape[1]:
                grown[:size] = self._matrix[:size]
            else:  # another model's vectors: measure every item again
                self._rows.clear()
                size, need = 0, len(ids)
            self._matrix = grown
        self._matrix[size:need] = vectors
        for offset, item_id in enumerate(ids):
            self._rows[item_id] = size + offset
        self._size = need


def fitted(index: DenseIndex | None, embedder: Embedder | None) -> DenseIndex | None:
    """``index`` if it measures with ``embedder``; else a new index for it (None for None)."""
    if embedder is None:
        return None
    return index if index is not None and index.embedder is embedder else DenseIndex(embedder)


def combine(
    relevance: Mapping[int, float], dense: Similarities | None, weight: float = DENSE_WEIGHT
) -> dict[int, float]:
    """Lexical relevance (each item's share of the best, in [0, 1]) with ``weight`` times each
    candidate's dense similarity above the median, as a share of the best's; rescaled so the best
    is 1 again. Below the median, similarity adds nothing: half the conversation is unrelated."""
    if dense is None or len(dense.ids) == 0:
        return dict(relevance)
    values = dense.values.astype(np.float64)
    floor = float(np.partition(values, len(values) // 2)[len(values) // 2])
    span = float(values.max()) - floor
    if not span > 0:
        return dict(relevance)
    gains = (values - floor) * (weight / span)
    combined = dict(relevance)
    ids, gaining = dense.ids, np.flatnonzero(gains > 0)
    for key, gain in zip([ids[at] for at in gaining.tolist()], gains[gaining].tolist(), strict=True):
        combined[key] = combined.get(key, 0.0) + gain
    peak = max(combined.values())
    return {k: v / peak for k, v in combined.items()}
