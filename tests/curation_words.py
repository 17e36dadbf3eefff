"""Scripts for the engine's property tests: short texts of a few words, names and entities the
entity reader and the scoring both act on, and the messages that carry them."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

WORDS = ("deploy", "invoice", "garden", "JWTError", "auth.py", "Maya", "port 5432", "lentils", "Friday")


def word_texts(max_words: int) -> st.SearchStrategy[str]:
    """Texts of 1 to ``max_words`` of :data:`WORDS`."""
    return st.lists(st.sampled_from(WORDS), min_size=1, max_size=max_words).map(" ".join)


@dataclass(frozen=True)
class Say:
    """One message of a script: who says it, what, and whether the user pins it."""

    role: str
    text: str
    pin: bool = False
