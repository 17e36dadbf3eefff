"""The model-summary cache (schema v9 ``message_summaries``): a summary is kept for the text it was
written from. A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import select, select_one

if TYPE_CHECKING:
    from engine.summaries.model import StoredSummary


class SummaryRecords(Database):
    """The summaries part of the store (see the module)."""

    def load_summaries(self, session_id: int) -> list[StoredSummary]:
        from engine.summaries.model import StoredSummary, SummaryLevel, source_hash

        levels = frozenset(level.value for level in SummaryLevel)

        with self._transaction() as conn:
            rows = select(
                conn,
                "SELECT s.message_id, s.level, s.source_hash, s.text, s.model, m.content"
                " FROM message_summaries s JOIN messages m ON m.id = s.message_id WHERE m.session_id = ?"
                " ORDER BY s.message_id",
                (session_id,),
            )
            # The trigger drops a summary when its message's text changes; the hash is checked anyway,
            # so a summary of other text is never used even if the trigger was bypassed.
            return [
                StoredSummary(
                    message_id=int(row["message_id"]),
                    level=SummaryLevel(row["level"]),
                    source_hash=str(row["source_hash"]),
                    text=str(row["text"]),
                    model=str(row["model"]),
                )
                for row in rows
                if row["level"] in levels and source_hash(str(row["content"])) == row["source_hash"]
            ]

    def save_summary(self, summary: StoredSummary) -> None:
        from engine.summaries.model import source_hash

        with self._transaction() as conn:
            row = select_one(conn, "SELECT content FROM messages WHERE id = ?", (summary.message_id,))
            if row is None or source_hash(str(row["content"])) != summary.source_hash:
                return  # the message went, or its text changed while the summary was being written
            conn.execute(
                "INSERT OR REPLACE INTO message_summaries (message_id, level, source_hash, model, text)"
                " VALUES (?, ?, ?, ?, ?)",
                (summary.message_id, summary.level.value, summary.source_hash, summary.model, summary.text),
            )
