"""Dense text embeddings for recall by meaning (:mod:`engine.curation.dense`); ``providers/``
implements them (a local static-embedding model, later a provider's endpoint)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""One row per text, each of unit length (so a dot product is the cosine similarity)."""


class Embedder(Protocol):
    """Turns texts into unit vectors; called from worker threads only, never on the event loop."""

    @property
    def name(self) -> str:
        """The model's name, as the config and reports say it."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length row per text, in order (a row of zeros for a text with no known word)."""
        ...
