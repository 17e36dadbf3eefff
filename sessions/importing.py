"""Importing a transcript file as a new session (the format of :mod:`sessions.exchange`), streamed.

The file is read a line at a time and inserted a batch at a time, in one transaction: a file of any
size takes the memory of a batch, and a bad line (named, with its number) leaves nothing behind.
Times outside 1970-2099 are refused (:mod:`engine.text.moments`): moved to another zone, a date near the
ends of what Python holds overflows, and no session may hold one.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.chat import MessageStatus, SessionSettings, counted
from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind
from engine.text.inert import quoted
from engine.text.moments import RANGE_TEXT, in_range
from sessions import story_exchange
from sessions.exchange import INTERRUPTED_ON_EXPORT, Curation, ExchangedMessage, SessionHeader
from sessions.rows import inserted_id, select_one, value
from sessions.transcript import SessionLine, TranscriptError, session_lines


@dataclass(frozen=True, slots=True)
class Stored:
    """Where an imported session went: its id, how many messages it holds, its title."""

    session_id: int
    messages: int
    title: str
    shown: int
    """The messages the chat shows: all but superseded replies (:func:`engine.chat.counted`)."""


@dataclass(frozen=True, slots=True)
class SessionFile:
    """A transcript file being imported: its header (read from the first line) and its messages,
    read from the file as they are taken, so that a file of any size takes the memory of one line."""

    path: Path
    header: SessionHeader
    lines: Iterator[tuple[int, SessionLine]]
    """Every message line (the first included) with its line number; one pass."""


Progress = Callable[[int], None]
"""Told how many messages an import has stored so far, every :data:`BATCH` messages."""
BATCH = 2_000
"""Messages inserted at a time by an import."""


def _utc_text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def open_session_file(path: Path) -> SessionFile:
    """A transcript file to import: an export from Heedful, or any transcript replay reads. Reads
    the first line now (for the header); the rest is read as :attr:`SessionFile.lines` is taken.

    The title is the one the export recorded (unless blank), else the file's name.

    Raises:
        TranscriptError: The file cannot be read or its first line is bad; the message names the line.
            Taking the lines raises it too, for the first bad line.
    """
    lines = session_lines(path)
    first = next(lines, None)
    recorded = first[1].session if first is not None else None
    title = recorded.title if recorded is not None and recorded.title.strip() else path.stem or "imported"
    header = (
        SessionHeader(title=title)
        if recorded is None
        else SessionHeader(
            title=title,
            consent_policy=ConsentChoice(recorded.consent_policy) if recorded.consent_policy else None,
            saved_tokens=recorded.saved_tokens,
            settings=SessionSettings(
                system_prompt=recorded.system_prompt,
                model=recorded.model,
                profile=recorded.profile,
                temperature=recorded.temperature,
            ),
            keep_rules=tuple(recorded.keep_rules),
            story_lines=tuple(recorded.story_lines),
        )
    )
    return SessionFile(path, header, lines if first is None else itertools.chain([first], lines))


def _message(path: Path, number: int, line: SessionLine, now: datetime) -> ExchangedMessage:
    created = now
    if line.created_at is not None:
        try:
            created = datetime.fromisoformat(line.created_at)
        except ValueError as err:
            raise TranscriptError(
                f"{quoted(str(path))}, line {number}: created_at is not an ISO-8601 date and time"
                f" ({line.created_at!r})."
            ) from err
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
        if not in_range(created):
            raise TranscriptError(
                f"{quoted(str(path))}, line {number}: created_at is out of range ({line.created_at!r}): "
                f"Heedful keeps dates from {RANGE_TEXT}."
            )
    has_record = line.state is not None or any(
        (line.pinned, line.kept_by_user, line.forgotten, line.summary is not None)
    )
    return ExchangedMessage(
        id=line.id,
        role=line.role,
        content=line.content,
        status=MessageStatus(line.status or MessageStatus.COMPLETE),
        created_at=created,
        tokens=line.tokens,
        model=line.model,
        error=line.error,
        curation=Curation(
            state=ItemState(line.state or ItemState.ACTIVE),
            pinned=line.pinned,
            kept_by_user=bool(line.kept_by_user),
            summary=line.summary,
            forgotten=bool(line.forgotten),
        )
        if has_record
        else None,
    )


# --- the store side: run by SqliteChatStore in a transaction ----------------------------------


def store(
    conn: sqlite3.Connection, source: SessionFile, *, now: datetime, progress: Progress | None = None
) -> Stored:
    """Create a new session holding the messages of ``source`` (and their curation records, the
    settings and the policy), reading and inserting :data:`BATCH` messages at a time.

    Run in one transaction: a bad line raises :class:`TranscriptError` and nothing is left behind.
    Repeated ids are found through a temporary table rather than a set of every id seen.

    Args:
        now: The new session's created and updated time.
        progress: Told the count of messages stored after each batch.
    """
    header = source.header
    stamp = _utc_text(now)
    cursor = conn.execute(
        "INSERT INTO sessions (title, created_at, updated_at, system_prompt, model, profile, temperature)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            header.title,
            stamp,
            stamp,
            header.settings.system_prompt,
            header.settings.model,
            header.settings.profile,
            header.settings.temperature,
        ),
    )
    session_id = inserted_id(cursor)
    if header.consent_policy is not None or header.saved_tokens:
        conn.execute(
            "INSERT INTO session_curation (session_id, consent_policy, saved_tokens) VALUES (?, ?, ?)",
            (session_id, header.consent_policy, header.saved_tokens),
        )
    conn.executemany(
        "INSERT INTO keep_rules (session_id, text, created_at) VALUES (?, ?, ?)",
        [(session_id, text, stamp) for text in header.keep_rules],
    )
    conn.execute(
        "CREATE TEMP TABLE imported_ids (transcript_id TEXT PRIMARY KEY, line INTEGER NOT NULL) WITHOUT ROWID"
    )
    next_id = int(value(conn, "SELECT COALESCE(MAX(id), 0) + 1 FROM messages"))
    reason = f"imported from {source.path.name}"
    count = shown = 0
    batch: list[tuple[int, ExchangedMessage]] = []
    """The messages read and not yet inserted, each with its line number."""
    lines = iter(source.lines)
    while True:
        try:
            taken = next(lines, None)
            if taken is not None:
                batch.append((taken[0], _message(source.path, *taken, now)))
        except TranscriptError:
            # A line before this one may repeat an id: that is the first error of the file.
            _note_ids(conn, source.path, batch)
            raise
        if batch and (taken is None or len(batch) == BATCH):
            _note_ids(conn, source.path, batch)
            _insert(conn, session_id, next_id + count, batch, reason, stamp)
            count += len(batch)
            shown += sum(1 for _, message in batch if counted(message.status))
            batch.clear()
            if progress is not None:
                progress(count)
        if taken is None:
            break
    conn.execute("DROP TABLE temp.imported_ids")
    story_exchange.stored(conn, session_id, header.story_lines)
    return Stored(session_id, count, header.title, shown)


def _note_ids(conn: sqlite3.Connection, path: Path, batch: list[tuple[int, ExchangedMessage]]) -> None:
    """Note the batch's transcript ids as imported; a :class:`TranscriptError` for the first line
    whose id was used before (on an earlier line, or earlier in the batch)."""
    ids = [(message.id, number) for number, message in batch]
    try:
        conn.executemany("INSERT INTO temp.imported_ids VALUES (?, ?)", ids)
    except sqlite3.IntegrityError:
        # The rows before the repeated one went in, each under its own line number.
        for transcript_id, number in ids:
            first = select_one(
                conn, "SELECT line FROM temp.imported_ids WHERE transcript_id = ?", (transcript_id,)
            )
            if first is not None and first["line"] != number:
                raise TranscriptError(
                    f"{quoted(str(path))}, line {number}: the id {transcript_id!r} was used before."
                ) from None
        raise


_MESSAGE_FIELDS = 11
"""The columns an import writes for each message."""


def _insert(
    conn: sqlite3.Connection,
    session_id: int,
    first_id: int,
    batch: list[tuple[int, ExchangedMessage]],
    reason: str,
    stamp: str,
) -> None:
    """Insert a batch of messages, under row ids from ``first_id`` on, and their curation records."""
    rows = []
    for message_id, (_, message) in enumerate(batch, start=first_id):
        status, error = message.status, message.error
        if status == MessageStatus.STREAMING:
            status, error = MessageStatus.INTERRUPTED, error or INTERRUPTED_ON_EXPORT
        created = _utc_text(message.created_at)
        rows.append(
            (
                message_id,
                session_id,
                message.role,
                message.content,
                status,
                message.tokens,
                message.model,
                error,
                created,
                created,
                message.id,
            )
        )
    # Many rows to a statement: the full-text index's trigger then writes its terms once a
    # statement, not once a row (a row a statement took 3-4 times as long).
    per_statement = max(1, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // _MESSAGE_FIELDS)
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        values = ", ".join([f"({', '.join('?' * _MESSAGE_FIELDS)})"] * len(chunk))
        conn.execute(
            "INSERT INTO messages (id, session_id, role, content, status, tokens, model, error, created_at,"
            f" updated_at, transcript_id) VALUES {values}",
            [value for row in chunk for value in row],
        )
    records = [
        (message_id, m.curation)
        for message_id, (_, m) in enumerate(batch, start=first_id)
        if m.curation is not None
    ]
    conn.executemany(
        "INSERT INTO item_state (message_id, state, pinned, kept_by_user, summary, forgotten)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(i, r.state, int(r.pinned), int(r.kept_by_user), r.summary, int(r.forgotten)) for i, r in records],
    )
    conn.executemany(
        "INSERT INTO ledger (session_id, turn, kind, target, action, reason, scores, before, after,"
        " requires_consent, reversible, created_at)"
        " VALUES (?, 0, ?, ?, 'import', ?, '{}', NULL, ?, 0, 1, ?)",
        [
            (session_id, EntryKind.OPERATION, str(i), _import_reason(r, reason), r.state, stamp)
            for i, r in records
        ],
    )


def _import_reason(record: Curation, reason: str) -> str:
    marks = [record.state.value]
    marks += [
        name
        for name, on in (
            ("pinned", record.pinned),
            ("kept by the user", record.kept_by_user),
            ("forgotten", record.forgotten),
        )
        if on
    ]
    return f"{reason} as {', '.join(marks)}"
