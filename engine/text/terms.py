"""Words and index terms for lexical relevance.

``terms`` turns text into the stemmed, stopword-free tokens the relevance index counts. Code is
tokenised both ways users refer to it: ``snake_case_name`` and ``camelCase`` yield the whole
identifier and its parts, so "case name" finds ``snake_case_name`` and vice versa.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["STOPWORDS", "count_terms", "stem", "terms", "words"]

_STOPWORDS = """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can cannot could did do does doing down during each either else ever
    few for from further had has have having he her here hers herself him himself his how however i
    if in into is it its itself just let lets may me might more most must my myself neither no nor
    not now of off on once only or other ought our ours ourselves out over own same shall she should
    since so some such than that the their theirs them themselves then there these they this those
    through thus to too under until up upon us very was we were what whatever when whenever where
    whether which while who whoever whom whose why will with within without would yet you your yours
    yourself yourselves
    aren couldn didn doesn don hadn hasn haven isn ll mustn needn re shan shouldn ve wasn weren won
    wouldn
    """
STOPWORDS: frozenset[str] = frozenset(_STOPWORDS.split())
"""Common English function words: they carry no topic, so the index skips them.

The second group is what remains of negative contractions and "'ll"/"'re"/"'ve" once ``words``
splits at the apostrophe ("don't" gives "don" and "t")."""

# A possessive "'s" is dropped before splitting, so "Caroline's" indexes as "caroline"; what remains is
# split at every run of word characters, one linear pass.
_POSSESSIVE = re.compile(r"['’][sS]\b")
_TOKEN = re.compile(r"\w+")
_SPACE = re.compile(r"[ \n]")
# Split points inside an ASCII camelCase word: "HTTPServer" -> HTTP, Server; "utf8Decode" -> utf8, Decode.
_ASCII_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def _humps(word: str) -> list[str]:
    """The camelCase parts of ``word`` (a single part when it is not camelCase)."""
    if word.isascii():
        return _ASCII_HUMP.findall(word) or [word]
    # Non-ASCII identifiers ("naïveBayes"): split before an upper-case letter that follows a
    # lower-case one, which covers the common shapes without a Unicode-class regex.
    parts: list[str] = []
    start = 0
    for index in range(1, len(word)):
        if word[index].isupper() and word[index - 1].islower():
            parts.append(word[start:index])
            start = index
    parts.append(word[start:])
    return parts


def _is_plain(word: str) -> bool:
    """True when ``word`` is one word, not a camelCase compound ("Caroline", "HTTP", "x86")."""
    return word.islower() or word.isupper() or word[1:].islower()


def encodable(text: str) -> str:
    """``text`` with any lone surrogate (from a file read with surrogateescape, say) replaced by
    U+FFFD: SQLite, tiktoken and HTTP all need text that encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


PIECE_CHARS = 65_536
"""Long texts are scanned in pieces of about this size, cut at whitespace: one regex or tokenizer
call holds the GIL until it returns, and on a 10 MB paste that froze the UI thread."""


def pieces(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces of about PIECE_CHARS, each cut just before a space or newline
    (never inside a word), so that scanning piece by piece finds the same words as scanning the
    whole. A stretch with no space at all is not cut until its end."""
    start, end = 0, len(text)
    while end - start > PIECE_CHARS:
        limit = start + PIECE_CHARS
        cut = max(text.rfind(" ", start + 1, limit), text.rfind("\n", start + 1, limit))
        if cut < 0:  # no space in this stretch (a base64 blob, say): look further on
            found = _SPACE.search(text, limit)
            if found is None:
                break
            cut = found.start()
        yield text[start:cut]
        start = cut
    yield text[start:end]


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text``, identifiers also split into their parts.

    Tokens are runs of letters and digits (any script). A trailing possessive "'s" is dropped.
    ``snake_case_name`` gives ``snake_case_name``, ``snake``, ``case``, ``name``; ``camelCase`` gives
    ``camelcase``, ``camel``, ``case``. Runs in time linear in the length of ``text``.

    Args:
        text: Any text, including code and control characters.

    Returns:
        The tokens in order of appearance, case-folded, duplicates kept.
    """
    return list(iter_words(text))


def iter_words(text: str) -> Iterator[str]:
    """:func:`words` one at a time: counting the words of a long reply from a list held every word
    string at once."""
    tokens = (token for piece in pieces(text) for token in _TOKEN.findall(_POSSESSIVE.sub("", piece)))
    for token in tokens:
        if "_" not in token and _is_plain(token):  # most words: no parts to add
            yield token.casefold()
            continue
        core = token.strip("_")
        if not core:
            continue
        yield core.casefold()
        segments = [segment for segment in core.split("_") if segment]
        parts = [part for seg in segments for part in ([seg] if _is_plain(seg) else _humps(seg))]
        if len(parts) > 1:
            yield from (part.casefold() for part in parts)


_stemmer: Any = None
# A Snowball stemmer object keeps the word being stemmed as state, so concurrent calls from
# worker threads must not interleave inside one.
_stemmer_lock = threading.Lock()


def stem(word: str) -> str:
    """The Snowball (Porter2) English stem of ``word``.

    PyStemmer's C build of the algorithm, ~0.3 µs a word: fast enough to need no cache of our own.

    Args:
        word: One lower-case word, as produced by ``words``.

    Returns:
        The stem, e.g. "running" -> "run", "generalization" -> "general".
    """
    global _stemmer
    with _stemmer_lock:
        if _stemmer is None:
            import Stemmer  # type: ignore[import-not-found, unused-ignore]

            # No cache: PyStemmer's own (a dict, 10,000 words by default) makes a call slower
            # (0.97 µs a word against 0.32) and holds memory for the life of the process.
            _stemmer = Stemmer.Stemmer("english", 0)
        return str(_stemmer.stemWord(word))


def terms(text: str) -> list[str]:
    """The index terms of ``text``: its words minus stopwords and 1-character tokens, stemmed.

    Args:
        text: Any text.

    Returns:
        Stems in order of appearance, duplicates kept so the caller can count term frequency.
    """
    return list(iter_terms(text))


def iter_terms(text: str) -> Iterator[str]:
    """:func:`terms` one at a time (see :func:`iter_words`)."""
    for word in iter_words(text):
        found = term(word)
        if found is not None:
            yield found


def count_terms(text: str) -> dict[str, int]:
    """Each index term of ``text`` (see :func:`terms`) and how often it occurs, in order of
    first appearance.

    Each distinct word is stemmed once: text repeats its words, a long chat a few thousand distinct
    ones many times over.
    """
    counts: dict[str, int] = {}
    for word in iter_words(text):
        counts[word] = counts.get(word, 0) + 1
    found: dict[str, int] = {}
    for word, count in counts.items():
        stemmed = term(word)
        if stemmed is not None:
            found[stemmed] = found.get(stemmed, 0) + count
    return found


def term(word: str) -> str | None:
    """The index term one word of :func:`words` counts as; None for a stopword or a 1-character
    token."""
    if len(word) <= 1 or word in STOPWORDS:
        return None
    # Numbers stem to themselves: a log's thousands of distinct line numbers need no stemmer call.
    return word if word.isdecimal() else stem(word)
