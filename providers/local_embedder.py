"""A local embedder over WordLlama's bundled static embeddings: offline, no download, numpy only.

WordLlama's wheel ships its weights (a float16 token table) and its tokenizer; they are read
directly, not through ``WordLlama.load``, whose loader looks for the tokenizer in another folder
than the one it ships in and then tries the network, and which holds the table in float32. Loaded
in a worker, never on the first-paint path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import util
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.protocols.embeddings import Vectors

MODEL = "l2_supercat"
"""WordLlama's default model: 256 dimensions, 16 MB of weights in the wheel."""
DIMENSIONS = 256
NAME = f"wordllama/{MODEL}"
BATCH = 256
"""Texts tokenized per call."""


class LocalEmbedder:
    """:class:`engine.protocols.embeddings.Embedder` over WordLlama's token table and tokenizer.

    Pools the tokens itself, as WordLlama does (their mean, then unit length): WordLlama's own
    ``embed`` pads a batch to its longest text (a long message made every batch hundreds of
    megabytes) and holds its table in float32; the weights ship in float16, kept so here.
    """

    def __init__(self, table: npt.NDArray[np.float16], tokenize: Callable[[list[str]], list[Any]]) -> None:
        self._table = table
        self._tokenize = tokenize

    @property
    def name(self) -> str:
        return NAME

    def embed(self, texts: Sequence[str]) -> Vectors:
        table, last = self._table, self._table.shape[0] - 1
        vectors = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            encoded = self._tokenize(list(texts[start : start + BATCH]))
            for row, tokens in enumerate(encoded, start=start):
                ids = np.asarray(tokens.ids, dtype=np.int64)
                if len(ids):
                    vectors[row] = table[np.minimum(ids, last)].sum(axis=0, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)  # no known word: zeros
        return vectors


def load_local_embedder() -> LocalEmbedder:
    """WordLlama's bundled model, read from the files its wheel ships (nothing is downloaded).

    Raises:
        ImportError: WordLlama (or its tokenizers, safetensors) is not installed.
        OSError: The shipped files could not be read.
    """
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    package = _package_dir()
    weights = load_file(str(package / "weights" / f"{MODEL}_{DIMENSIONS}.safetensors"))
    table = np.asarray(weights["embedding.weight"], dtype=np.float16)
    tokenizer = Tokenizer.from_file(str(package / "tokenizers" / f"{MODEL}_tokenizer_config.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()

    def tokenize(texts: list[str]) -> list[Any]:
        return list(tokenizer.encode_batch(texts, add_special_tokens=False))

    return LocalEmbedder(table, tokenize)


def _package_dir() -> Path:
    spec = util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise ImportError("wordllama is not installed")
    return Path(spec.origin).parent
