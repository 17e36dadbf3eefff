"""The SQL of the model-summary cache (schema v9 ``message_summaries``); see ``ChatStore.load_summaries``."""

from __future__ import annotations

import sqlite3

from engine.summaries.model import StoredSummary, SummaryLevel, source_hash

_LEVELS = frozenset(level.value for level in SummaryLevel)


def load(conn: sqlite3.Connection, session_id: int) -> list[StoredSummary]:
    rows = conn.execute(
        "SELECT s.message_id, s.level, s.source_hash, s.text, s.model, m.content"
        " FROM message_summaries s JOIN messages m ON m.id = s.message_id WHERE m.session_id = ?"
        " ORDER BY s.message_id",
        (session_id,),
    ).fetchall()
    # The trigger drops a summary when its message's text changes; the hash is checked anyway, so
    # a summary of other text is never used even if the trigger was bypassed.
    return [
        StoredSummary(int(message_id), SummaryLevel(level), str(hashed), str(text), str(model))
        for message_id, level, hashed, text, model, content in rows
        if level in _LEVELS and source_hash(str(content)) == hashed
    ]


def save(conn: sqlite3.Connection, summary: StoredSummary) -> None:
    row = conn.execute("SELECT content FROM messages WHERE id = ?", (summary.message_id,)).fetchone()
    if row is None or source_hash(str(row[0])) != summary.source_hash:
        return  # the message went, or its text changed while the summary was being written
    conn.execute(
        "INSERT OR REPLACE INTO message_summaries (message_id, level, source_hash, model, text)"
        " VALUES (?, ?, ?, ?, ?)",
        (summary.message_id, summary.level.value, summary.source_hash, summary.model, summary.text),
    )
