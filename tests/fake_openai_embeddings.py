"""The fake server's ``POST /v1/embeddings``: deterministic vectors, a hashed bag of words, so texts
that share words are close and texts that share none are far apart (see tests/fake_openai.py). A
few synonyms count as one word, as a real model places them together: a question can be close
in meaning to a message it shares no word with."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

DIMENSIONS = 64
"""Each vector's length: words hash into this many buckets."""

_WORD = re.compile(r"[a-z0-9]+")
SYNONYMS = {"feline": "kitten", "cat": "kitten", "sibling": "sister", "take": "adopted"}
"""Words the fake model places with another (a real model's neighbours in meaning)."""


def vector(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """``text``'s unit vector: one bucket per word (by a stable hash), counted, then normalised."""
    counts = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2s(SYNONYMS.get(word, word).encode(), digest_size=4).digest()
        counts[int.from_bytes(digest, "big") % dimensions] += 1.0
    norm = math.sqrt(sum(c * c for c in counts))
    return [c / norm for c in counts] if norm else counts


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The status and JSON body for one embeddings request (a 400 for an input of the wrong shape)."""
    given = body.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        error = {"message": "input must be a string or a list of strings", "type": "invalid_request_error"}
        return 400, {"error": {**error, "param": "input", "code": None}}
    data = [{"object": "embedding", "index": n, "embedding": vector(t)} for n, t in enumerate(texts)]
    words = sum(len(_WORD.findall(t)) for t in texts)
    return 200, {
        "object": "list",
        "data": data,
        "model": body.get("model", "fake-embedding"),
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }
