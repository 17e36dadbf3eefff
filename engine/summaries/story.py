"""The story so far: a running chronological digest of the conversation, every line naming its sources.

Each message contributes one fragment, its most central sentence (offline, extractive). Messages are
grouped into topic segments as they arrive: a user message whose words (and entities) share little
with the open segment's starts a new one, and a segment never grows past :data:`MAX_EXCHANGES`
exchanges. Segments are decided from what came before only, so adding messages one by one builds
the same segments as reading them all at once. :mod:`engine.summaries.story_lines` renders them
into the prompt's lines within a fixed room.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from engine.chat import Role
from engine.curation.items import id_label
from engine.text.clipping import clip_text
from engine.text.terms import term

MAX_FRAGMENT_CHARS = 150
"""A fragment is the start of its sentence, cut at a word: a line stays short to read."""
MAX_SOURCE_CHARS = 1_500
"""Only the opening of a long message is read for its sentences (its first screens say what it is about)."""
MIN_EXCHANGES = 2
"""A segment holds at least this many exchanges before a change of topic may close it."""
MAX_EXCHANGES = 6
"""A segment is closed at this many exchanges whatever its topic: lines stay one event apart."""
SHIFT_SIMILARITY = 0.08
"""A user message whose term cosine with the open segment is below this starts a new segment."""
PHRASE_WORDS = 7
"""A message's key phrase is this many consecutive words of its central sentence."""
MIN_SENTENCE_TERMS = 3
"""A sentence with fewer index terms ("Thanks!", "Sure.") stands for a message only if it has no other."""

_WORD = re.compile(r"[^\W_]+")
_term = functools.lru_cache(maxsize=50_000)(term)
"""Stems of plain lower-case words, cached: every sentence of every message is read for its story."""


def _terms(text: str) -> list[str]:
    """``text``'s index terms, plainly split (no code identifiers' parts: a sentence's rank needs no more)."""
    return [t for w in _WORD.findall(text.lower()) if (t := _term(w)) is not None]


_PUNCTUATION = ".,;:!?\"'()[]{}“”‘’…-"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_CODE_LINE = re.compile(r"^\s*(```|[{}()\[\];<>#/*|$`-]|\w+\s*[=(:]\s*\S*$)")


@dataclass(frozen=True, slots=True)
class Fragment:
    """One message's most central sentence: what the story may say of it, and who said it."""

    item_id: int
    named: str | None
    """How the conversation names the message, when not by its id (see :attr:`label`)."""
    role: Role
    speaker: str
    said: str
    """The sentence, shortened, without the ellipsis that ends a shortened one (see :attr:`text`)."""
    cut: bool
    """The sentence was shortened (:attr:`text` ends with an ellipsis)."""
    start: int
    end: int
    """Where :attr:`phrase` lies in :attr:`text` (a long session keeps thousands of fragments: the
    phrase is not kept as a string of its own, nor is the ellipsis that would store an ASCII
    sentence at two bytes a character)."""
    terms: frozenset[str]

    @classmethod
    def of(
        cls,
        item_id: int,
        label: str,
        role: Role,
        speaker: str,
        sentence: str,
        phrase: str,
        terms: frozenset[str],
    ) -> Fragment:
        """The fragment of ``sentence`` (as :func:`shorten` gives it) and its ``phrase`` (a part of it)."""
        cut = sentence.endswith("…")
        start = sentence.find(phrase)
        said = sentence[:-1] if cut else sentence
        named = None if label == id_label(item_id) else label
        return cls(item_id, named, role, speaker, said, cut, start, start + len(phrase), terms)

    @property
    def label(self) -> str:
        """How reasons and lines name the message (``#id`` unless a transcript names it otherwise):
        made when asked, not kept for each of a long story's thousands."""
        return self.named if self.named is not None else id_label(self.item_id)

    @property
    def text(self) -> str:
        """The sentence, shortened."""
        return self.said + "…" if self.cut else self.said

    @property
    def phrase(self) -> str:
        """Its few words that say most (the rarest in the session so far): the story's briefest line."""
        return self.text[self.start : self.end]


_NO_TERMS: frozenset[str] = frozenset()
"""A closed segment's fragments' terms (an empty frozenset is not shared: 216 bytes each)."""


@dataclass(slots=True)
class Segment:
    """Consecutive messages about one topic, oldest first."""

    fragments: list[Fragment] = field(default_factory=list)
    exchanges: int = 0
    profile: dict[str, int] = field(default_factory=dict)
    """Term counts of the segment's messages (dropped when it closes)."""
    closed: bool = False
    central: tuple[int, ...] = ()
    """Positions in :attr:`fragments`, most central first (set when it closes; the open one's are
    worked out when asked)."""

    def ranking(self) -> tuple[int, ...]:
        """The fragments' indices, most central to the segment first (ties: the earlier first)."""
        if self.closed:
            return self.central
        return _rank(self.fragments, self.profile)


def _rank(fragments: list[Fragment], profile: Mapping[str, int]) -> tuple[int, ...]:
    weights = [_cosine(f.terms, profile) for f in fragments]
    return tuple(sorted(range(len(fragments)), key=lambda n: (-weights[n], n)))


def _cosine(words: frozenset[str], profile: Mapping[str, int]) -> float:
    if not words or not profile:
        return 0.0
    dot = sum(profile.get(w, 0) for w in words)
    norm = math.sqrt(sum(c * c for c in profile.values()))
    return dot / (math.sqrt(len(words)) * norm) if norm else 0.0


def _profile_cosine(
    counts: Mapping[str, int], profile: Mapping[str, int], idf: Callable[[str], float]
) -> float:
    """The cosine of two term counts, each term weighed by its rarity (words said everywhere do
    not hold a topic together)."""
    if not counts or not profile:
        return 0.0
    weight = {t: idf(t) for t in counts.keys() | profile.keys()}
    dot = sum(c * profile.get(t, 0) * weight[t] ** 2 for t, c in counts.items())
    first = math.sqrt(sum((c * weight[t]) ** 2 for t, c in counts.items()))
    second = math.sqrt(sum((c * weight[t]) ** 2 for t, c in profile.items()))
    return dot / (first * second) if first and second else 0.0


def central_sentence(text: str, counts: Mapping[str, int]) -> tuple[str, frozenset[str]] | None:
    """The sentence of ``text`` that best stands for it (most of its frequent terms, for its
    length), shortened, with its terms; None when the text has no prose sentence."""
    best: tuple[float, str, frozenset[str]] | None = None
    for raw in _SENTENCE_END.split(text[:MAX_SOURCE_CHARS]):
        sentence = " ".join(raw.split())
        if not sentence or _CODE_LINE.match(raw):
            continue
        found = frozenset(_terms(sentence))
        if not found:
            continue
        # fsum: exact, so the sum is the same in any order the set gives its terms (replay is deterministic)
        weight = math.fsum(math.log1p(counts.get(t, 1)) for t in found) / math.sqrt(len(found) + 4)
        weight += 10.0 if len(found) >= MIN_SENTENCE_TERMS else 0.0
        if best is None or weight > best[0]:
            best = (weight, sentence, found)
    if best is None:
        return None
    return clip_text(best[1], MAX_FRAGMENT_CHARS, trailing=" ,;:"), best[2]  # a full stop stays


def key_phrase(sentence: str, idf: Callable[[str], float]) -> str:
    """The :data:`PHRASE_WORDS` consecutive words of ``sentence`` whose terms are rarest in the
    session (the earliest such run), without the punctuation at its ends."""
    tokens = sentence.split()
    if len(tokens) <= PHRASE_WORDS:
        return sentence.strip(" ,;:-")
    weights = []
    for token in tokens:
        # Words, not symbols: a formula's or a path's rare pieces say little to a reader.
        found = [t for t in _terms(token) if t.isalpha()]
        weights.append(sum(idf(t) for t in found) if token.strip(_PUNCTUATION).isalpha() else -1.0)
    best, start = -1.0, 0
    window = sum(weights[:PHRASE_WORDS])
    for n in range(len(tokens) - PHRASE_WORDS + 1):
        if n:
            window += weights[n + PHRASE_WORDS - 1] - weights[n - 1]
        if window > best + 1e-9:
            best, start = window, n
    return " ".join(tokens[start : start + PHRASE_WORDS]).strip(" ,;:-(")


class Story:
    """The session's segments, grown one message at a time (:meth:`add`)."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.version = 0
        """Changes whenever a fragment is added or a segment closes (renderings are cached by it)."""

    def add(
        self,
        item_id: int,
        role: Role,
        text: str,
        counts: Mapping[str, int],
        *,
        label: str,
        name: str | None = None,
        idf: Callable[[str], float] = lambda _term: 1.0,
    ) -> None:
        """Take the message ``item_id`` (its text and term counts) as the conversation's next;
        ``idf`` weighs a term by its rarity in the session so far."""
        if role in ("system", "tool"):
            return  # system messages are always sent; a tool's output is told by the reply to it
        if role == "user":
            self._start_exchange(counts, idf)
        segment = self._open()
        for word, count in counts.items():
            segment.profile[word] = segment.profile.get(word, 0) + count
        found = central_sentence(text, counts)
        if found is not None:
            sentence, found_terms = found
            speaker = name or role
            phrase = key_phrase(sentence, idf)
            fragment = Fragment.of(item_id, label, role, speaker, sentence, phrase, found_terms)
            segment.fragments.append(fragment)
        self.version += 1

    def _open(self) -> Segment:
        if not self.segments or self.segments[-1].closed:
            self.segments.append(Segment())
        return self.segments[-1]

    def _start_exchange(self, counts: Mapping[str, int], idf: Callable[[str], float]) -> None:
        if self.segments and not self.segments[-1].closed:
            current = self.segments[-1]
            full = current.exchanges >= MAX_EXCHANGES
            shifted = (
                current.exchanges >= MIN_EXCHANGES
                and _profile_cosine(counts, current.profile, idf) < SHIFT_SIMILARITY
            )
            if full or shifted:
                self._close(current)
        self._open().exchanges += 1

    def _close(self, segment: Segment) -> None:
        segment.central = _rank(segment.fragments, segment.profile)
        segment.profile = {}
        segment.closed = True
        segment.fragments = [
            replace(f, terms=_NO_TERMS) for f in segment.fragments
        ]  # the terms served the ranking; a long session keeps thousands of fragments
        self.version += 1

    def item_ids(self) -> list[int]:
        """Every message the story has a fragment of, oldest first."""
        return [f.item_id for s in self.segments for f in s.fragments]
