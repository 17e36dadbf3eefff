"""What a standing statement is about: a known slot (the language of answers, the database, the
test framework, ...) or its content words, and what it names as the thing it replaces ("not MySQL",
"over unittest"). Two statements about the same subject: the later supersedes the earlier.

The slot tables are general software and language vocabulary, not tuned to any conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.text.terms import STOPWORDS, stem


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_LANGUAGES = _set("""english french spanish german italian portuguese dutch russian chinese mandarin cantonese
japanese korean arabic hindi polish swedish turkish greek hebrew ukrainian czech danish norwegian finnish
vietnamese thai indonesian romanian hungarian bengali urdu persian farsi swahili catalan latin""")
_SLOTS: dict[str, frozenset[str]] = {
    "database": _set("""postgresql postgres postgre mysql mariadb sqlite sqlite3 mongodb mongo redis dynamodb
    cassandra oracle mssql cockroachdb supabase firestore duckdb neo4j couchdb elasticsearch clickhouse"""),
    "test framework": _set("pytest unittest nose nose2 jest mocha vitest jasmine rspec minitest junit"),
    "package manager": _set("pip pipenv poetry uv conda mamba npm yarn pnpm bun"),
    "web framework": _set("django flask fastapi starlette express nextjs rails laravel spring nestjs"),
    "frontend framework": _set("react vue svelte angular solid preact htmx"),
    "cloud": _set("aws gcp azure heroku vercel netlify fly.io digitalocean"),
    "units": _set("metric imperial celsius fahrenheit kilometres kilometers miles"),
    "indentation": _set("tabs spaces"),
    "formatter": _set("black ruff prettier yapf autopep8"),
}
_SLOT_OF: dict[str, str] = {stem(word): slot for slot, words in _SLOTS.items() for word in words}
_SLOT_WORDS: dict[str, frozenset[str]] = {
    "language": frozenset({"languag"}),
    "database": frozenset({"databas", "db"}),
    "test framework": frozenset({"framework", "runner"}),
    "package manager": frozenset({"packag", "manag"}),
    "web framework": frozenset({"framework"}),
    "frontend framework": frozenset({"framework", "frontend"}),
    "cloud": frozenset({"cloud", "host"}),
    "units": frozenset({"unit"}),
    "indentation": frozenset({"indent", "indentat"}),
    "formatter": frozenset({"formatt", "format"}),
}
"""The words that name a slot itself ("the database"): a message using one is about the slot."""
_LANGUAGE = re.compile(
    r"\b(?:in|into|to)\s+(?:" + "|".join(sorted(_LANGUAGES)) + r")\b"
    r"|\b(?:answer|reply|respond|write|speak|talk|translate)\w*\b.*\b(?:"
    + "|".join(sorted(_LANGUAGES))
    + r")\b"
)
_REPLACES = re.compile(
    r",?\s*\b(?:not|instead of|rather than|over|than|in place of|off|away from|no longer|to replace"
    r"|replacing)\b"
)
_GENERIC = frozenset(
    stem(w)
    for w in _set("""always never ever please use using used answer answers answering reply replies respond
    responses response write writing written give say said make keep put add include going go forward rest
    conversation chat session project future time every thing things stuff way like better prefer rather
    decided decision agreed switch switching move moving migrate stick stay settle pick chose chosen let lets
    okay ok sure also really generally usually strongly definitely personally instead one ones something
    anything everything start begin end again feel free want need would able mind""")
)


@dataclass(frozen=True, slots=True)
class Subject:
    """What a statement is about."""

    slot: str | None
    """A known slot ("language", "database", ...), or None: then its words say what it is about."""
    terms: frozenset[str]
    """Its content words (stems): what it asks for or chose."""
    replaces: frozenset[str] = frozenset()
    """The words of what it names as replaced ("not MySQL", "over unittest")."""

    def words(self) -> frozenset[str]:
        """The words that name this subject (its own words, what it replaced, its slot's name):
        a message using one is about it."""
        return self.terms | self.replaces | _SLOT_WORDS.get(self.slot or "", frozenset())


def stems(text: str) -> frozenset[str]:
    """The content words of ``text``, stemmed, whole (not split at camelCase)."""
    return frozenset(stem(w) for w in re.findall(r"[\w.+#-]*\w|\w", text.lower()) if w not in STOPWORDS)


def subject_of(body: str) -> Subject:
    """The subject of a statement's ``body`` (lower-cased: the words after its pattern)."""
    cut = _REPLACES.search(body)
    chosen, replaced = (body[: cut.start()], body[cut.end() :]) if cut else (body, "")
    if not stems(chosen) - _GENERIC:  # "not to use classes": a negation, not a replacement
        chosen, replaced = body, ""
    terms = stems(chosen) - _GENERIC
    replaces = stems(replaced) - _GENERIC
    slot = "language" if _LANGUAGE.search(body) else _slot(chosen) or _slot(replaced)
    return Subject(slot, terms, replaces)


_QUALIFIERS = frozenset({"in", "for", "inside", "within", "when", "with"})


def _slot(text: str) -> str | None:
    """The slot a word of ``text`` names, unless it only qualifies ("semicolons in JavaScript")."""
    before = ""
    for word in re.findall(r"[\w.+#-]*\w|\w", text):
        slot = _SLOT_OF.get(stem(word))
        if slot is not None and before not in _QUALIFIERS:
            return slot
        before = word
    return None


def overlaps(one: Iterable[str], other: frozenset[str]) -> bool:
    """Whether a word of ``one`` is in ``other``, or a prefix of one of at least five letters
    ("postgr" and "postgresql")."""
    for word in one:
        if word in other:
            return True
        if len(word) >= 5 and any(o.startswith(word) or (len(o) >= 5 and word.startswith(o)) for o in other):
            return True
    return False


def same_subject(later: Subject, earlier: Subject) -> bool:
    """Whether ``later`` is about what ``earlier`` was: the same slot, it names ``earlier``'s
    choice as replaced, or most of their words are the same."""
    if later.slot is not None and later.slot == earlier.slot:
        return True
    if later.replaces and overlaps(later.replaces, earlier.terms):
        return True
    if later.slot is not None or earlier.slot is not None:
        return False
    union = later.terms | earlier.terms
    return bool(union) and len(later.terms & earlier.terms) * 2 >= len(union)


class NameIndex:
    """Which of several word sets a message's words name, as :func:`overlaps` decides, in time that
    grows with the message's words, not with the sets (a plan asks on every turn)."""

    def __init__(self, sets: Iterable[Iterable[str]]) -> None:
        self.prefixes: dict[str, list[int]] = {}
        """Each word, and each of its prefixes of five letters or more: the sets it is in, in
        order (lists: most hold one set, and an empty set alone takes 216 bytes)."""
        self.exact: dict[str, list[int]] = {}
        """Each word of five letters or more: the sets it is in, in order."""
        self.size = 0
        for words in sets:
            self.add(words)

    def add(self, words: Iterable[str]) -> None:
        """Index one more set (the next index)."""
        index = self.size
        self.size += 1
        prefixes, exact = self.prefixes, self.exact
        for word in words:
            _note(prefixes, word, index)
            for end in range(5, len(word)):
                _note(prefixes, word[:end], index)
            if len(word) >= 5:
                _note(exact, word, index)

    def named(self, words: Iterable[str]) -> set[int]:
        """The sets one of ``words`` names: the same word, a word it begins (five letters or
        more), or a word of five letters or more it begins with."""
        found: set[int] = set()
        prefixes, exact = self.prefixes, self.exact
        for word in words:
            found.update(prefixes.get(word, ()))
            for end in range(5, len(word)):
                found.update(exact.get(word[:end], ()))
        return found


def _note(sets_of: dict[str, list[int]], word: str, index: int) -> None:
    """Add set ``index`` to ``word``'s sets (indexes come in order: a repeat is the last one)."""
    found = sets_of.get(word)
    if found is None:
        sets_of[word] = [index]
    elif found[-1] != index:
        found.append(index)
