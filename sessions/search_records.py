"""Finding messages across sessions (FTS5), and deleting sessions with a way back (trash, restore, purge).

Functions over an open connection; :class:`sessions.store.SqliteChatStore` runs each one in a
transaction under its lock. The trash is the store's own list of the sessions it hid (the latest
last), passed in: a trashed session is only restorable from the store that trashed it.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from engine.chat import Role, Session
from engine.errors import StoreError
from engine.text.moments import stored_moment
from sessions.session_rows import SESSION_COLUMNS, decode_session, get_session

# --- full-text search ---------------------------------------------------------------------------

# Noncharacters: never meant to appear in text, so they cannot be confused with a message's own.
_MATCH_START = "\ufdd0"
_MATCH_END = "\ufdd1"
_WORD = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")
_MAX_QUERY_PIECES = 16


def fts_query(text: str) -> str | None:
    """An FTS5 query for what a user typed: each piece a quoted phrase of its words, its last word
    a prefix (when it has two letters or more: one letter starts thousands of words, and ranking them
    all would be slow for nothing).

    Only letters and digits reach FTS5 (as the unicode61 tokenizer splits words), always inside
    double quotes, so nothing the user types is read as query syntax. None when there is no word.
    """
    phrases = []
    for piece in text.split()[:_MAX_QUERY_PIECES]:
        words = _WORD.findall(piece)
        if words:
            phrases.append('"' + " ".join(words) + ('"*' if len(words[-1]) > 1 else '"'))
    return " ".join(phrases) or None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A message that matched a search."""

    session_id: int
    session_title: str
    message_id: int
    role: Role
    created_at: datetime
    text: str
    """The part of the message around the match, on one line, ``…`` where it was cut."""
    matches: tuple[tuple[int, int], ...]
    """Where in :attr:`text` the query matched: (start, end) offsets."""
    rank: float
    """bm25: lower is better."""

    @property
    def snippet(self) -> str:
        """:attr:`text` with each match between « and »."""
        out, last = [], 0
        for start, end in self.matches:
            out += [self.text[last:start], "«", self.text[start:end], "»"]
            last = end
        out.append(self.text[last:])
        return "".join(out)


def search(conn: sqlite3.Connection, match: str, limit: int) -> list[SearchHit]:
    """Messages matching the FTS5 query ``match`` (from :func:`fts_query`), the best first.

    Superseded replies and deleted sessions are left out.
    """
    rows = conn.execute(
        "SELECT m.session_id, s.title, m.id, m.role, m.created_at,"
        " snippet(messages_fts, 0, ?, ?, '…', 16), bm25(messages_fts) AS rank"
        " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
        " JOIN sessions s ON s.id = m.session_id"
        " WHERE messages_fts MATCH ? AND m.status != 'superseded' AND s.deleted_at IS NULL"
        " ORDER BY rank, m.id DESC LIMIT ?",
        (_MATCH_START, _MATCH_END, match, limit),
    ).fetchall()
    return [_hit(row) for row in rows]


def _hit(row: sqlite3.Row | tuple[object, ...]) -> SearchHit:
    text, matches = _unmark(str(row[5]))
    return SearchHit(
        session_id=int(cast(int, row[0])),
        session_title=str(row[1]),
        message_id=int(cast(int, row[2])),
        role=cast(Role, row[3]),
        created_at=stored_moment(str(row[4])),
        text=text,
        matches=matches,
        rank=float(cast(float, row[6])),
    )


def _unmark(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """FTS5's snippet (matches between the two noncharacters) as one line of text and match offsets."""
    text, matches = "", []
    inside = False
    for piece in re.split(f"([{_MATCH_START}{_MATCH_END}])", marked):
        if piece == _MATCH_START:
            inside = True
        elif piece == _MATCH_END:
            inside = False
        else:
            piece = _SPACE.sub(" ", piece)
            if text.endswith(" ") and piece.startswith(" "):
                piece = piece[1:]
            if inside and piece:
                matches.append((len(text), len(text) + len(piece)))
            text += piece
    return text, tuple(matches)


# --- trash: delete now, undo until the store closes ---------------------------------------------


def trash(conn: sqlite3.Connection, trashed: list[int], session_id: int, *, now: str) -> Session:
    """Hide a session as if deleted and add it to ``trashed``.

    Raises:
        StoreError: There is no such session.
    """
    session = get_session(conn, session_id)
    conn.execute("UPDATE sessions SET deleted_at = ? WHERE id = ?", (now, session_id))
    trashed.append(session_id)
    return session


def restore(conn: sqlite3.Connection, trashed: list[int], session_id: int) -> Session:
    """Undo :func:`trash` and take the session off ``trashed``.

    Raises:
        StoreError: The session is not in ``trashed`` (deleted for good, or never trashed there).
    """
    if session_id not in trashed:
        raise StoreError(f"The session {session_id} cannot be restored: it was deleted for good.")
    conn.execute("UPDATE sessions SET deleted_at = NULL WHERE id = ?", (session_id,))
    session = get_session(conn, session_id)
    trashed.remove(session_id)
    return session


def trashed_sessions(conn: sqlite3.Connection, trashed: list[int]) -> list[Session]:
    """The sessions in ``trashed`` that can still be restored, the latest first."""
    found = []
    for session_id in reversed(trashed):
        row = conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ? AND s.deleted_at IS NOT NULL",
            (session_id,),
        ).fetchone()
        if row is not None:
            found.append(decode_session(row))
    return found


def purge(conn: sqlite3.Connection, trashed: list[int]) -> None:
    """Delete for real the sessions in ``trashed``, and empty it."""
    conn.executemany("DELETE FROM sessions WHERE id = ? AND deleted_at IS NOT NULL", [(i,) for i in trashed])
    trashed.clear()
