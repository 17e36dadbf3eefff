"""Short texts for the engine's property tests: a few words, names and entities the entity reader
and the scoring both act on, in random runs."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = ("deploy", "invoice", "garden", "JWTError", "auth.py", "Maya", "port 5432", "lentils", "Friday")


def word_texts(max_words: int) -> st.SearchStrategy[str]:
    """Texts of 1 to ``max_words`` of :data:`WORDS`."""
    return st.lists(st.sampled_from(WORDS), min_size=1, max_size=max_words).map(" ".join)
