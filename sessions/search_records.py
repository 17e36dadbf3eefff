"""Finding messages across sessions (FTS5), and deleting sessions with a way back (trash, restore,
purge). A part of :class:`sessions.store.SqliteChatStore`.

The trash is the store's own list of the sessions it hid: a trashed session is only restorable from
the store that trashed it, and is deleted for real when that store closes.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from engine.chat import Role, Session
from engine.errors import StoreError
from engine.text.moments import stored_moment
from sessions.database import Database
from sessions.rows import now_text
from sessions.session_records import existing_session, find_session

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


def _hit(row: sqlite3.Row) -> SearchHit:
    text, matches = _unmark(str(row["snippet"]))
    return SearchHit(
        session_id=int(row["session_id"]),
        session_title=str(row["title"]),
        message_id=int(row["id"]),
        role=row["role"],
        created_at=stored_moment(str(row["created_at"])),
        text=text,
        matches=matches,
        rank=float(row["rank"]),
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


class SearchRecords(Database):
    """Search and the trash (see the module)."""

    def __init__(self, path: Path) -> None:
        self._trashed: list[int] = []
        """Sessions this store hid with :meth:`trash_session`, the latest last; deleted when it closes."""
        super().__init__(path)

    def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """Messages of every session matching ``query``, the best first (FTS5's bm25).

        Each whitespace-separated piece of ``query`` must match, its words as a phrase and the last
        one as a word start (see :func:`fts_query`), so any text is a valid query: FTS5's own syntax
        (quotes, AND, NEAR, ``*``) is never interpreted. Superseded replies and deleted sessions are
        left out.
        """
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        return self._read(
            _hit,
            "SELECT m.session_id AS session_id, s.title AS title, m.id AS id, m.role AS role,"
            " m.created_at AS created_at,"
            " snippet(messages_fts, 0, ?, ?, '…', 16) AS snippet, bm25(messages_fts) AS rank"
            " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
            " JOIN sessions s ON s.id = m.session_id"
            " WHERE messages_fts MATCH ? AND m.status != 'superseded' AND s.deleted_at IS NULL"
            " ORDER BY rank, m.id DESC LIMIT ?",
            (_MATCH_START, _MATCH_END, match, limit),
        )

    def trash_session(self, session_id: int) -> Session:
        """Hide a session as if deleted, until :meth:`restore_session` or until this store closes.

        Raises:
            StoreError: There is no such session.
        """
        with self._transaction() as conn:  # self._trashed is only used under the lock, as here
            session = existing_session(conn, session_id)
            conn.execute("UPDATE sessions SET deleted_at = ? WHERE id = ?", (now_text(), session_id))
            self._trashed.append(session_id)
            return session

    def restore_session(self, session_id: int) -> Session:
        """Undo :meth:`trash_session`.

        Raises:
            StoreError: The session is gone (its store closed, or it was never trashed here).
        """
        with self._transaction() as conn:
            if session_id not in self._trashed:
                raise StoreError(f"The session {session_id} cannot be restored: it was deleted for good.")
            conn.execute("UPDATE sessions SET deleted_at = NULL WHERE id = ?", (session_id,))
            session = existing_session(conn, session_id)
            self._trashed.remove(session_id)
            return session

    def trashed_sessions(self) -> list[Session]:
        """The sessions this store trashed that can still be restored, the latest first."""
        with self._transaction() as conn:
            found = (find_session(conn, session_id, deleted=True) for session_id in reversed(self._trashed))
            return [session for session in found if session is not None]

    def purge_trash(self) -> None:
        """Delete for real the sessions this store trashed."""
        with self._transaction() as conn:
            conn.executemany(
                "DELETE FROM sessions WHERE id = ? AND deleted_at IS NOT NULL", [(i,) for i in self._trashed]
            )
            self._trashed.clear()

    def close(self) -> None:
        """Delete for real the sessions this store trashed, then close the database."""
        if self._trashed:
            with suppress(StoreError):  # a read-only or full disk: the next open deletes them
                self.purge_trash()
        super().close()
