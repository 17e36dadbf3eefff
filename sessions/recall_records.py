"""Cold recall in the store: a session's messages before its curated cut, found through the FTS5
index (see :mod:`engine.curation.cold_store`). A mixin of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import TypeVar

from engine.chat import StoredMessage
from sessions import message_records

_T = TypeVar("_T")
_WORD = re.compile(r"[^\W_]+")


def any_word_query(words: Sequence[str]) -> str | None:
    """An FTS5 query matching any of ``words``: each quoted, so nothing in them is read as query
    syntax (only letters and digits reach it); None when there is no word."""
    quoted = dict.fromkeys('"' + " ".join(found) + '"' for w in words if (found := _WORD.findall(w)))
    return " OR ".join(quoted) or None


SCANNED = 2_000
"""The most matching messages ranked for one query, the latest first: a word that fills an earlier
part of a long session would otherwise have every message it is in ranked."""


def earlier_matches(
    conn: sqlite3.Connection, session_id: int, upto: int, match: str, limit: int
) -> list[StoredMessage]:
    """The session's messages with ids up to ``upto`` matching the FTS5 query ``match``, by bm25
    among the latest :data:`SCANNED` that match."""
    columns = ", ".join(f"m.{c.strip()}" for c in message_records.MESSAGE_COLUMNS.split(","))
    rows = conn.execute(
        f"SELECT * FROM (SELECT {columns}, bm25(messages_fts) AS rank"
        " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
        " LEFT JOIN item_state i ON i.message_id = m.id"
        " WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND m.session_id = ?"
        " AND m.status NOT IN ('superseded', 'failed', 'streaming') AND COALESCE(i.forgotten, 0) = 0"
        " ORDER BY messages_fts.rowid DESC LIMIT ?)"
        " ORDER BY rank, id DESC LIMIT ?",
        (match, upto, session_id, SCANNED, limit),
    ).fetchall()
    return [message_records.decode(row) for row in rows]


class RecallMethods:
    """The cold-recall half of the store (see the module)."""

    # Provided by SqliteChatStore.
    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    def earlier_matches(
        self, session_id: int, *, upto: int, words: Sequence[str], limit: int
    ) -> list[StoredMessage]:
        """See :meth:`engine.curation.cold_store.ColdStore.earlier_matches`."""
        match = any_word_query(words)
        if match is None or limit <= 0:
            return []
        return self._run(lambda conn: earlier_matches(conn, session_id, upto, match, limit))
