"""Cold recall in the store: a session's messages before its curated cut, found through the FTS5
index (see :mod:`engine.curation.cold_store`). A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from engine.chat import StoredMessage
from sessions.database import Database
from sessions.message_records import MESSAGE_COLUMNS, NOT_IN_CONVERSATION, message_from
from sessions.rows import select, value

_WORD = re.compile(r"[^\W_]+")
_COLUMNS = ", ".join(f"m.{c.strip()}" for c in MESSAGE_COLUMNS.split(","))
_IN_CONVERSATION = f"m.status NOT IN ({NOT_IN_CONVERSATION}) AND COALESCE(i.forgotten, 0) = 0"
"""Messages cold recall may send: in the conversation, and not taken out by the user."""


def any_word_query(words: Sequence[str]) -> str | None:
    """An FTS5 query matching any of ``words``: each quoted, so nothing in them is read as query
    syntax (only letters and digits reach it); None when there is no word."""
    quoted = dict.fromkeys('"' + " ".join(found) + '"*' for w in words if (found := _WORD.findall(w)))
    return " OR ".join(quoted) or None


def folded(word: str) -> str:
    """``word`` as the full-text index holds its words: lower case, accents taken off."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


_VOCABULARY = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.message_words USING fts5vocab(main, messages_fts, row)"
"""The index's words with how many messages hold each (made for each connection: nothing stored)."""
_LAST_WORD = "\U0010ffff"
"""Sorts after every word: ``term >= w AND term < w || this`` are the words that begin with w."""

SCANNED = 2_000
"""The most matching messages ranked for one query, the latest first: a word that fills an earlier
part of a long session would otherwise have every message it is in ranked."""


class RecallRecords(Database):
    """The cold-recall part of the store (see the module)."""

    def earlier_matches(
        self, session_id: int, *, upto: int, words: Sequence[str], limit: int
    ) -> list[StoredMessage]:
        """The session's messages with ids up to ``upto`` matching any of ``words``, by bm25 among
        the latest :data:`SCANNED` that match (see :class:`engine.curation.cold_store.ColdStore`)."""
        match = any_word_query(words)
        if match is None or limit <= 0:
            return []
        return self._read(
            message_from,
            f"SELECT * FROM (SELECT {_COLUMNS}, bm25(messages_fts) AS rank"
            " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
            " LEFT JOIN item_state i ON i.message_id = m.id"
            " WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND m.session_id = ?"
            f" AND {_IN_CONVERSATION}"
            " ORDER BY messages_fts.rowid DESC LIMIT ?)"
            " ORDER BY rank, id DESC LIMIT ?",
            (match, upto, session_id, SCANNED, limit),
        )

    def word_documents(self, words: Sequence[str]) -> tuple[int, list[int]]:
        """How many messages the store holds (its highest id: ids are not reused, so a close count),
        and for each of ``words`` how many hold it or a word beginning with it: how rare it is in all
        the user has written (see :class:`engine.curation.cold_store.ColdStore`)."""
        with self._transaction() as conn:
            conn.execute(_VOCABULARY)
            total = int(value(conn, "SELECT COALESCE(MAX(id), 0) FROM messages"))
            counts = []
            for word in words:
                start = folded(word)
                found = "SELECT COALESCE(SUM(doc), 0) FROM temp.message_words WHERE term >= ? AND term < ?"
                counts.append(int(value(conn, found, (start, start + _LAST_WORD))) if start else 0)
        return total, counts

    def earlier_around(
        self, session_id: int, ids: Sequence[int], *, upto: int, reach: int
    ) -> list[list[StoredMessage]]:
        """For each of ``ids``, that message with the ``reach`` messages of the conversation on either
        side of it (ids up to ``upto``), in order: a run of messages that follow one another."""
        near = (
            f"SELECT {_COLUMNS} FROM messages m LEFT JOIN item_state i ON i.message_id = m.id"
            f" WHERE m.session_id = ? AND {_IN_CONVERSATION} AND m.id"
        )
        runs: list[list[StoredMessage]] = []
        with self._transaction() as conn:  # one transaction for all: each read is small
            for message_id in ids:
                at_or_before = (session_id, message_id, reach + 1)
                before = select(conn, f"{near} <= ? ORDER BY m.id DESC LIMIT ?", at_or_before)
                after_it = (session_id, message_id, upto, reach)
                after = select(conn, f"{near} > ? AND m.id <= ? ORDER BY m.id LIMIT ?", after_it)
                if before and before[0]["id"] == message_id:
                    runs.append([message_from(row) for row in [*before[::-1], *after]])
        return runs
