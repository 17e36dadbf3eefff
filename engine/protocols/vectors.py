"""Where message vectors are kept between runs, so a provider's endpoint is asked once per message
text; ``sessions.embedding_records.EmbeddingRecords`` implements it (rows of float32 bytes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StoredVector:
    """One message's vector from one model, valid for the text whose hash it carries."""

    message_id: int
    model: str
    text_hash: str
    vector: bytes
    """The unit vector as little-endian float32 values."""


class VectorStore(Protocol):
    """The cache of message vectors, by model name. Every method commits before it returns."""

    def load_vectors(self, model: str, hashes: Mapping[int, str]) -> dict[int, bytes]:
        """The vectors ``model`` gave the messages of ``hashes`` (message id → text hash) for those
        texts; a message whose text changed since (another hash) or that has none is left out."""
        ...

    def save_vectors(self, vectors: Sequence[StoredVector]) -> None:
        """Keep ``vectors`` (replacing a message's older one from the same model); messages gone
        since are skipped."""
        ...
