"""Dense similarity: how close in meaning each item is to the new message, beside its words.

A :class:`DenseIndex` keeps every item's unit vector from an :class:`Embedder`, computed once per
item when a plan first needs it (plans run in the curation's worker thread), and measures a new
message against all candidates in one matrix product. With a :class:`VectorStore` it reads the
vectors kept for the items' texts first and keeps those it had to ask for; an embedder that fails
(a provider's endpoint) leaves the plan to words alone, said once through :class:`DenseTrouble`.
:func:`combine` adds that to the lexical relevance: dense similarity alone ranks worse than BM25,
the two together better than either.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.curation.items import Item
from engine.errors import ModelError, StoreError
from engine.protocols.embeddings import Embedder, Vectors
from engine.protocols.vectors import StoredVector, VectorStore

DENSE_WEIGHT = 0.5
"""What the candidate closest in meaning adds to its relevance (before relevance is rescaled to a
best of 1): words stay the stronger signal."""
BATCH = 512
"""Texts embedded per call when items are first measured."""
REST_PLANS = 5
"""After the embedder fails, this many plans go by with words alone before it is asked again."""


@dataclass(frozen=True, slots=True)
class Similarities:
    """The candidates' cosine similarities to the new message, in the order of ``ids``."""

    ids: Sequence[int]
    values: Vectors


class DenseTrouble:
    """The embedder's failures, told once: the first failure's reason waits for :meth:`take`, and
    the next is told only after the embedder has worked again. Shared by every session's index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._told = False
        self._waiting: str | None = None
        self._rest = 0

    def failed(self, reason: str) -> None:
        with self._lock:
            self._rest = REST_PLANS
            if not self._told:
                self._told, self._waiting = True, reason

    def worked(self) -> None:
        with self._lock:
            self._told = False

    def resting(self) -> bool:
        """Whether this plan goes without the embedder (it failed a few plans ago)."""
        with self._lock:
            if self._rest <= 0:
                return False
            self._rest -= 1
            return True

    def take(self) -> str | None:
        """The notice not yet given (None: none), given now."""
        with self._lock:
            waiting, self._waiting = self._waiting, None
            return waiting


class DenseIndex:
    """Each item's vector (one row of a matrix that grows as items come), by item id.

    Args:
        embedder: Gives the vectors.
        cache: Keeps vectors between runs (by the embedder's name and each text's hash); None: none.
        trouble: Where the embedder's failures are told; None: a failure is raised.
        budget: Seconds one plan may spend asking for new vectors; the items left unmeasured are
            measured by the next plans (None: no limit).
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        cache: VectorStore | None = None,
        trouble: DenseTrouble | None = None,
        budget: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.embedder = embedder
        self.cache = cache
        self.trouble = trouble
        self._budget = budget
        self._clock = clock
        self._rows: dict[int, int] = {}
        self._matrix: Vectors = np.zeros((0, 0), dtype=np.float32)
        self._size = 0
        self._last_query: tuple[str, Vectors] | None = None
        """The last new message and its vector: it is a candidate of the next plan."""

    def __len__(self) -> int:
        return self._size

    def similarities(self, query: str, items: Sequence[Item]) -> Similarities:
        """How close ``query`` is to each of ``items`` (their vectors computed first if new); none
        (words alone) when the embedder failed (told through :attr:`trouble`) or rests after failing."""
        trouble = self.trouble
        if trouble is not None and trouble.resting():
            return _none()
        try:
            self._measure([i for i in items if i.id not in self._rows])
            if not items:
                return _none()
            vector = self._query(query)
        except ModelError as err:
            if trouble is None:
                raise
            trouble.failed(err.user_message)
            return _none()
        if trouble is not None:
            trouble.worked()
        rows = self._rows
        measured = [i for i in items if i.id in rows]  # all, unless the budget ran out
        # einsum, not ``@``: OpenBLAS's threads were slower for this one product on a busy machine,
        # and their spinning slowed the rest of the plan (docs/performance.md, "curation p95").
        every = np.einsum("ij,j->i", self._matrix[: self._size], vector)
        at = np.fromiter((rows[i.id] for i in measured), dtype=np.intp, count=len(measured))
        return Similarities([i.id for i in measured], every[at])

    def _query(self, query: str) -> Vectors:
        last = self._last_query
        if last is not None and last[0] == query:
            return last[1]
        vector: Vectors = self.embedder.embed([query])[0]
        self._last_query = (query, vector)
        return vector

    def _measure(self, missing: Sequence[Item]) -> None:
        """Give ``missing`` their vectors: those kept for their texts, the last query's, then the
        embedder's (in batches, within the budget), kept for the next run."""
        if not missing:
            return
        texts = {i.id: i.text for i in missing}
        hashes: dict[int, str] = {}
        if self.cache is not None:
            from engine.summaries.model import source_hash

            hashes = {key: source_hash(text) for key, text in texts.items()}
            self._keep_found(self._cached(hashes))
        last = self._last_query
        if last is not None:
            again = [key for key, text in texts.items() if key not in self._rows and text == last[0]]
            if again:
                self._keep(again, np.stack([last[1]] * len(again)))
                self._save(again, hashes)
        todo = [key for key in texts if key not in self._rows]
        began = self._clock()
        for start in range(0, len(todo), BATCH):
            if self._budget is not None and start and self._clock() - began > self._budget:
                return
            batch = todo[start : start + BATCH]
            self._keep(batch, self.embedder.embed([texts[key] for key in batch]))
            self._save(batch, hashes)

    def _cached(self, hashes: Mapping[int, str]) -> dict[int, Vectors]:
        assert self.cache is not None
        try:
            found = self.cache.load_vectors(self.embedder.name, hashes)
        except StoreError:
            return {}  # a cache: the embedder is asked instead
        return {
            key: np.frombuffer(data, dtype="<f4")
            for key, data in found.items()
            if data and len(data) % 4 == 0
        }

    def _keep_found(self, found: Mapping[int, Vectors]) -> None:
        width = self._matrix.shape[1] if self._size else None
        for dims in sorted({len(v) for v in found.values()}):
            keys = [key for key, v in found.items() if len(v) == dims]
            if width is None or dims == width:
                self._keep(keys, np.stack([found[key] for key in keys]).astype(np.float32))
                width = dims

    def _save(self, keys: Sequence[int], hashes: Mapping[int, str]) -> None:
        if self.cache is None:
            return
        name, rows = self.embedder.name, self._rows
        vectors = [
            StoredVector(key, name, hashes[key], self._matrix[rows[key]].astype("<f4").tobytes())
            for key in keys
            if key in hashes and key in rows
        ]
        with contextlib.suppress(StoreError):  # asked again next run
            self.cache.save_vectors(vectors)

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


def _none() -> Similarities:
    """No similarities: relevance from the words alone."""
    return Similarities((), np.zeros(0, dtype=np.float32))


@dataclass(frozen=True)
class Meaning:
    """Recall by meaning as set up: the embedder, the cache of its vectors, where its failures are
    told, and the seconds a plan may spend asking it (see :class:`DenseIndex`)."""

    embedder: Embedder
    trouble: DenseTrouble
    cache: VectorStore | None = None
    budget: float | None = None

    def index(self, current: DenseIndex | None) -> DenseIndex:
        """``current`` if it measures with this embedder; else a new index for it."""
        if current is not None and current.embedder is self.embedder:
            return current
        return DenseIndex(self.embedder, cache=self.cache, trouble=self.trouble, budget=self.budget)


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
