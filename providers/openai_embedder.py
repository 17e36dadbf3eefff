"""An :class:`engine.protocols.embeddings.Embedder` over an OpenAI-compatible ``/v1/embeddings``
(OpenAI, Ollama, vLLM, llama.cpp, LM Studio all serve one): recall by meaning with the connected
provider's embedding model.

Called from the curation's worker thread (plans are blocking), so it holds a synchronous
``openai.OpenAI`` client, made on first use: the ``openai`` package is not imported with this
module. Every failure is translated into :class:`engine.errors.ModelError` (redacted), which the
dense index turns into words alone for that plan and one notice.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import ModelError, ModelErrorKind
from engine.protocols.embeddings import Vectors
from providers.client_settings import ClientSettings
from providers.openai_errors import translate

if TYPE_CHECKING:
    import openai

DEFAULT_MODEL = "text-embedding-3-small"
"""OpenAI's small embedding model; a local server names its own (``nomic-embed-text`` in Ollama)."""
MAX_TEXTS = 64
"""Texts sent per request: a request's inputs are bounded in count and in tokens."""
MAX_REQUEST_CHARS = 120_000
"""Characters sent per request (about 30,000 tokens), so a batch of long messages is split."""
MAX_TEXT_CHARS = 8_000
"""Each text is cut to this many characters: embedding models take a few thousand tokens at most,
and a text longer than that fails the whole request on some servers."""
READ_TIMEOUT = 20.0
"""Seconds to wait for one request's vectors (a local server may be loading the model)."""


class ProviderEmbedder:
    """Embeds texts with ``model`` at ``base_url`` (None: the openai package's default, OpenAI's API).

    Args:
        model: The embedding model's name as the server knows it.
        base_url: The API's base URL, as the chat model's.
        api_key: The key, or None for servers that need none.
        connect_timeout: Seconds to wait for the connection.
        read_timeout: Seconds to wait for one request's answer.
        key_hint: Where the key comes from, for error messages.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        connect_timeout: float = 10.0,
        read_timeout: float = READ_TIMEOUT,
        key_hint: str | None = None,
    ) -> None:
        self._model = model
        self._settings = ClientSettings.of(base_url, api_key, connect_timeout, read_timeout)
        self._endpoint = self._settings.endpoint(model, key_hint)
        self._lock = threading.Lock()
        self._client: openai.OpenAI | None = None
        self._width = 1
        """The model's vector length, once known (the width of rows for texts with nothing to send)."""

    @property
    def name(self) -> str:
        return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit row per text (zeros for an empty one), asked for in requests of a bounded size.

        Raises:
            ModelError: the server could not be reached, refused, or answered with something else.
        """
        vectors = np.zeros((len(texts), self._width), dtype=np.float32)
        known = False
        sent = [(at, text[:MAX_TEXT_CHARS]) for at, text in enumerate(texts) if text.strip()]
        for request in _requests(sent):
            got = self._ask([text for _, text in request])
            if vectors.shape[1] != got.shape[1]:
                if known:
                    raise self._bad_answer("vectors of different lengths")
                vectors = np.zeros((len(texts), got.shape[1]), dtype=np.float32)
            known, self._width = True, got.shape[1]
            vectors[[at for at, _ in request]] = got
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors

    def close(self) -> None:
        """Close the HTTP connections; a later :meth:`embed` opens others."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _ask(self, texts: list[str]) -> Vectors:
        import openai

        try:
            answer = self._get_client().embeddings.create(
                model=self._model, input=texts, encoding_format="float"
            )
            rows = sorted(answer.data, key=lambda row: row.index)
            if len(rows) != len(texts):
                raise self._bad_answer(f"{len(rows)} vectors for {len(texts)} texts")
            got = np.asarray([row.embedding for row in rows], dtype=np.float32)
        except (openai.OpenAIError, ValueError, AttributeError, TypeError) as err:
            raise translate(err, "embeddings", self._endpoint) from err
        if got.ndim != 2 or not got.shape[1] or not np.isfinite(got).all():
            raise self._bad_answer("not a list of vectors")
        return got

    def _get_client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(**self._settings.options())
            return self._client

    def _bad_answer(self, what: str) -> ModelError:
        return ModelError(
            ModelErrorKind.BAD_RESPONSE,
            f"The embeddings from {self._endpoint.where} could not be used ({what}). "
            "Check embedding_model in your config.",
        )


def _requests(sent: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """``sent`` in requests of at most :data:`MAX_TEXTS` texts and :data:`MAX_REQUEST_CHARS` characters."""
    requests: list[list[tuple[int, str]]] = []
    size = 0
    for entry in sent:
        if not requests or len(requests[-1]) >= MAX_TEXTS or size + len(entry[1]) > MAX_REQUEST_CHARS:
            requests.append([])
            size = 0
        requests[-1].append(entry)
        size += len(entry[1])
    return requests
