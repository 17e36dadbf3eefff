"""Stored message analyses (see :mod:`engine.text.analysis`): compact JSON beside each message.

A part of :class:`sessions.store.SqliteChatStore`. A row is a cache: unreadable ones are skipped
(the message is analysed again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import id_bound, select_in

if TYPE_CHECKING:
    from engine.text.analysis import Analysis
    from sessions.analysis_codec import StoredAnalyses


_OF_SESSION = (
    "SELECT a.message_id, a.analysis FROM message_analyses a JOIN messages m ON m.id = a.message_id"
    " WHERE m.session_id = ? AND a.version = ?"
)
"""A session's stored analyses made at a version (the JSON of each, by message id)."""


class AnalysisRecords(Database):
    """The analyses part of the store (see the module)."""

    def load_analyses(
        self, session_id: int, version: int, *, after: int = 0, upto: int | None = None
    ) -> StoredAnalyses[Analysis]:
        from sessions.analysis_codec import StoredAnalyses, decode

        return StoredAnalyses(self._analyses(session_id, version, after, upto), decode)

    def analyses_of(self, session_id: int, version: int, ids: Sequence[int]) -> StoredAnalyses[Analysis]:
        from sessions.analysis_codec import StoredAnalyses, decode

        with self._transaction() as conn:
            rows = select_in(conn, f"{_OF_SESSION} AND a.message_id IN ({{}})", (session_id, version), ids)
            found = {int(row["message_id"]): str(row["analysis"]) for row in rows}
        return StoredAnalyses(found, decode)

    def load_terms(
        self, session_id: int, version: int, *, after: int = 0, upto: int | None = None
    ) -> StoredAnalyses[dict[str, int]]:
        from sessions.analysis_codec import StoredAnalyses, decode_terms

        return StoredAnalyses(self._analyses(session_id, version, after, upto), decode_terms)

    def _analyses(self, session_id: int, version: int, after: int, upto: int | None) -> dict[int, str]:
        with self._transaction() as conn:
            rows = conn.execute(
                f"{_OF_SESSION} AND a.message_id > ? AND a.message_id <= ?",
                (session_id, version, after, id_bound(upto)),
            )
            # (message id, JSON) pairs: the one query of the store read as pairs, for its thousands of rows.
            return {int(message_id): str(text) for message_id, text in rows}

    def save_analyses(self, version: int, analyses: Sequence[tuple[int, Analysis]]) -> None:
        if not analyses:
            return
        from sessions.analysis_codec import encode

        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO message_analyses (message_id, version, analysis)"
                " SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)",
                [(message_id, version, encode(analysis), message_id) for message_id, analysis in analyses],
            )
