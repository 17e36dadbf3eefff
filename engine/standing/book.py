"""A session's standing instructions: those recognised in the user's messages, with the user's own
edits, removals and additions, in conversation order; a later one on the same subject marks the
earlier superseded (both kept, each with its message id).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.standing.recognise import StandingKind, Statement, recognise
from engine.standing.subjects import NameIndex, Subject, same_subject, stems, subject_of
from engine.text.terms import stem

if TYPE_CHECKING:
    from engine.standing.section import StandingSection

MAX_CHARS = 400
"""A standing instruction longer than this is not sent every turn until the user shortens it (the
engine never rewrites the user's words)."""


@dataclass(frozen=True, slots=True)
class Edit:
    """The user's change to the book: a recognised statement edited (``text``) or removed (None),
    or one added by hand (``message_id`` None, placed after message ``after``)."""

    id: int
    message_id: int | None
    original: str | None
    text: str | None
    after: int = 0


@dataclass(frozen=True, slots=True)
class Standing:
    """One standing instruction, preference or decision as the panel and the prompt show it."""

    key: str
    """"m<message id>:<n>" for one recognised in a message, "h<edit id>" for one added by hand."""
    message_id: int | None
    text: str
    """The user's own words: their sentence, or their edit of it."""
    original: str | None
    kind: StandingKind
    subject: Subject
    edit_id: int | None = None
    superseded_by: str | None = None
    """The key of the later statement that changed this one."""

    @property
    def current(self) -> bool:
        return self.superseded_by is None

    @property
    def too_long(self) -> bool:
        return len(self.text) > MAX_CHARS

    @property
    def source(self) -> str:
        """Where it comes from, as a line of the section says it."""
        return f"message {self.message_id}" if self.message_id is not None else "added by you"


@dataclass(slots=True)
class StandingBook:
    """The statements recognised so far (as messages are added) and the user's edits."""

    found: list[tuple[int, Statement]] = field(default_factory=list)
    """(message id, the statement), in conversation order (message ids grow with it)."""
    read_through: int = 0
    """The last message read: messages are read once, in order."""
    edits: list[Edit] = field(default_factory=list)
    _entries: tuple[Standing, ...] | None = None
    _current: list[int] = field(default_factory=list)
    """Indexes in ``_entries`` of the statements not superseded."""
    _changes: Changes | None = None
    line_tokens: dict[str, int] = field(default_factory=dict)
    """Tokens of each line a section has listed (they are counted once)."""
    memo: dict[tuple[int, tuple[str, ...]], StandingSection | None] = field(default_factory=dict)
    """Sections built from the current entries (see :func:`engine.standing.section.section_for`)."""

    def observe(self, message_id: int, text: str) -> None:
        """Recognise what a user's message states (a cheap test rules most messages out); one
        read already (a pinned message before a long session's cut, read with the others there) is
        not read again."""
        if message_id <= self.read_through:
            return
        self.read_through = message_id
        statements = recognise(text)
        if not statements:
            return
        self.found.extend((message_id, s) for s in statements)
        entries = self._entries
        if entries is None or any(e.message_id == message_id or e.after >= message_id for e in self.edits):
            self._changed()
            return
        # A new message's statements come last: each supersedes the current ones on its subject
        # (a long session's statements are not compared again, pair by pair).
        grown = list(entries)
        for n, statement in enumerate(statements, start=1):
            key = f"m{message_id}:{n}"
            later = Standing(
                key, message_id, statement.text, statement.text, statement.kind, statement.subject
            )
            before = self._current
            self._current = _supersede_by(grown, before, later)
            if self._changes is not None:
                for index in before:
                    if not grown[index].current and grown[index].superseded_by == key:
                        self._changes.add(grown[index], later)
        self._entries = tuple(grown)
        self.memo.clear()

    def stating(self, upto: int) -> tuple[int, ...]:
        """The ids of the messages up to ``upto`` that state something, in order (each once)."""
        return tuple(dict.fromkeys(message_id for message_id, _ in self.found if message_id <= upto))

    def set_edits(self, edits: Iterable[Edit]) -> None:
        self.edits = list(edits)
        self._changed()

    def _changed(self) -> None:
        self._entries = None
        self._changes = None
        self.memo.clear()

    def entries(self) -> tuple[Standing, ...]:
        """Every statement in conversation order, superseded ones marked."""
        if self._entries is None:
            grown: list[Standing] = []
            current: list[int] = []
            for _, entry in self._ordered():
                current = _supersede_by(grown, current, entry)
            self._entries, self._current = tuple(grown), current
        return self._entries

    def changes(self) -> Changes:
        """The superseded statements, indexed (kept until the book changes)."""
        if self._changes is None:
            self._changes = Changes(self.entries())
        return self._changes

    def current(self) -> list[Standing]:
        return [s for s in self.entries() if s.current]

    def _ordered(self) -> list[tuple[float, Standing]]:
        changed = {(e.message_id, e.original): e for e in self.edits if e.message_id is not None}
        placed: list[tuple[float, Standing]] = []
        counts: dict[int, int] = {}
        for message_id, statement in self.found:
            n = counts[message_id] = counts.get(message_id, 0) + 1
            edit = changed.get((message_id, statement.text))
            if edit is not None and edit.text is None:
                continue  # the user removed it
            text = statement.text if edit is None or edit.text is None else edit.text
            subject = statement.subject if edit is None else _subject(text, statement.subject)
            entry = Standing(
                f"m{message_id}:{n}",
                message_id,
                text,
                statement.text,
                statement.kind,
                subject,
                edit.id if edit is not None else None,
            )
            placed.append((message_id + n / 100, entry))
        for edit in self.edits:
            if edit.message_id is None and edit.text is not None:
                kind, subject = _hand_kind(edit.text)
                entry = Standing(f"h{edit.id}", None, edit.text, None, kind, subject, edit.id)
                placed.append((edit.after + 0.99, entry))
        placed.sort(key=lambda pair: pair[0])
        return placed


def _subject(text: str, fallback: Subject) -> Subject:
    """The subject of the user's edited words (the original's when the edit names none)."""
    found = recognise(text)
    if found:
        return found[0].subject
    subject = subject_of(text.lower())
    return subject if subject.terms or subject.slot else fallback


def _hand_kind(text: str) -> tuple[StandingKind, Subject]:
    found = recognise(text)
    if found:
        return found[0].kind, found[0].subject
    return StandingKind.INSTRUCTION, subject_of(text.lower())


def _supersede_by(entries: list[Standing], current: list[int], later: Standing) -> list[int]:
    """Append ``later`` to ``entries``, marking the ``current`` ones on its subject superseded by
    it; the indexes of the current ones after."""
    still: list[int] = []
    for index in current:
        if same_subject(later.subject, entries[index].subject):
            entries[index] = _marked(entries[index], later.key)
        else:
            still.append(index)
    still.append(len(entries))
    entries.append(later)
    return still


def _marked(entry: Standing, by: str) -> Standing:
    return Standing(
        entry.key,
        entry.message_id,
        entry.text,
        entry.original,
        entry.kind,
        entry.subject,
        entry.edit_id,
        by,
    )


CHANGE_WORDS = frozenset(
    stem(w)
    for w in re.findall(
        r"\w+",
        """change changed switch switched move moved migrate migrated replace replaced instead why
        earlier before previous previously original originally decided decision reason used""",
    )
)
"""Words that ask about a change: with the words of what replaced a statement, they bring it back."""


def about(entries: Iterable[Standing], message: str) -> list[Standing]:
    """The superseded statements ``message`` is about: it names their own subject ("why did we
    move off Postgres?"), or asks about the change with the words of what replaced them ("why
    did we switch to SQLite?")."""
    return Changes(tuple(entries)).about(message)


class Changes:
    """The superseded statements of a book, indexed by the words that name each one's subject and
    its successor's: which a message is about, whatever their number."""

    def __init__(self, entries: tuple[Standing, ...]) -> None:
        by_key = {s.key: s for s in entries}
        self.replaced = [s for s in entries if not s.current]
        self.own = NameIndex(s.subject.words() for s in self.replaced)
        later = (by_key.get(s.superseded_by or "") for s in self.replaced)
        self.later = NameIndex(s.subject.words() if s is not None else () for s in later)

    def add(self, replaced: Standing, later: Standing) -> None:
        """Index a statement ``later`` has just superseded."""
        self.replaced.append(replaced)
        self.own.add(replaced.subject.words())
        self.later.add(later.subject.words())

    def about(self, message: str) -> list[Standing]:
        if not self.replaced:
            return []
        words = stems(message)
        if not words:
            return []
        found = self.own.named(words)
        if any(stem(w) in CHANGE_WORDS for w in re.findall(r"\w+", message.lower())):
            found |= self.later.named(words)
        return [s for index, s in enumerate(self.replaced) if index in found]
