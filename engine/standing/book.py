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
from engine.standing.subjects import Subject, overlaps, same_subject, stems, subject_of
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
    edits: list[Edit] = field(default_factory=list)
    _entries: tuple[Standing, ...] | None = None
    memo: dict[tuple[int, tuple[str, ...]], StandingSection | None] = field(default_factory=dict)
    """Sections built from the current entries (see :func:`engine.standing.section.section_for`)."""

    def observe(self, message_id: int, text: str) -> None:
        """Recognise what a user's message states (a cheap test rules most messages out)."""
        statements = recognise(text)
        if statements:
            self.found.extend((message_id, s) for s in statements)
            self._changed()

    def set_edits(self, edits: Iterable[Edit]) -> None:
        self.edits = list(edits)
        self._changed()

    def _changed(self) -> None:
        self._entries = None
        self.memo.clear()

    def entries(self) -> tuple[Standing, ...]:
        """Every statement in conversation order, superseded ones marked."""
        if self._entries is None:
            self._entries = supersede(self._ordered())
        return self._entries

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


def supersede(placed: list[tuple[float, Standing]]) -> tuple[Standing, ...]:
    """The statements in order, each earlier one on the same subject as a later one marked
    superseded by it."""
    entries = [s for _, s in placed]
    result = list(entries)
    for later_index, later in enumerate(entries):
        for index in range(later_index):
            earlier = result[index]
            if earlier.current and same_subject(later.subject, earlier.subject):
                result[index] = _marked(earlier, later.key)
    return tuple(result)


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
    words = stems(message)
    if not words:
        return []
    asks_change = any(stem(w) in CHANGE_WORDS for w in re.findall(r"\w+", message.lower()))
    listed = list(entries)
    by_key = {s.key: s for s in listed}
    found: list[Standing] = []
    for entry in listed:
        if entry.current:
            continue
        later = by_key.get(entry.superseded_by or "")
        if overlaps(words, entry.subject.words()) or (
            later is not None and asks_change and overlaps(words, later.subject.words())
        ):
            found.append(entry)
    return found
