"""What the curation engine reads in a message's text: its entities, its index terms, its role.

Reading a message (entity patterns, stemming) costs about a millisecond per kilobyte; a session of
10,000 messages took over 20 seconds to read again each time it was opened. So each analysis is
stored beside its message (see :class:`engine.protocols.store.ChatStore.load_analyses`) and read back
instead, unless :data:`ANALYSIS_VERSION` has changed since it was written.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.curation.items import MemoryRole
from engine.entities.mentions import Mention

ANALYSIS_VERSION = 4
"""Raise this whenever extraction, stemming or role classification changes what a text yields:
stored analyses of another version are ignored and redone. 2: the "attempt" memory role. 3: a
reasoning model's thinking is not part of its reply's text (engine.text.thinking). 4: entities without
sentence-opening words, labels, trace source lines and units; one mention per thing."""


@dataclass(frozen=True, slots=True)
class Analysis:
    mentions: tuple[Mention, ...]
    terms: dict[str, int]
    """Stemmed term → count (the speaker's name included, as for lexical relevance)."""
    memory_role: MemoryRole


def analyse_text(text: str, name: str | None = None) -> Analysis:
    """Read ``text`` (written by ``name``, when the conversation names its speakers)."""
    from engine.entities.extractor import extract_entities
    from engine.text.roles import classify

    mentions = tuple(extract_entities(text))
    return Analysis(mentions, term_counts(text, name), classify(text, mentions))


WARM_UP_TEXT = (
    "On 1 May 2024 at 10:00 src/app.py:12 raised ValueError; `make test` and https://example.com "
    "did not help. I prefer tabs. Maya decided: PORT = 8080."
)
"""A little of every kind of entity, a decision and a preference: what the patterns look for."""


def warm_up() -> None:
    """Read a sample text, so that the next one is read at full speed.

    The first text a process reads pays for importing the entity extractor and the role
    classifier and compiling their patterns. A session opened from the store is not
    read again (its analyses are stored), so that cost fell in the first turn after opening it.
    """
    analyse_text(WARM_UP_TEXT)


def term_counts(text: str, name: str | None = None) -> dict[str, int]:
    """Stemmed term → count for lexical relevance."""
    from engine.text.terms import count_terms

    # The speaker's name counts as a word of the message: "what did Maya say about X" should find
    # Maya's messages about X, not only messages that mention her.
    return count_terms(f"{text} {name}" if name else text)
