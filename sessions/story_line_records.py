"""The story lines a model wrote (schema v14 ``story_lines``), one per closed topic segment and
model: reopening a session does not ask for them again. A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import select, select_one

if TYPE_CHECKING:
    from engine.summaries.story_book import StoredStoryLine


class StoryLineRecords(Database):
    """The story lines part of the store (see the module)."""

    def load_story_lines(self, session_id: int) -> list[StoredStoryLine]:
        from engine.summaries.story_book import StoredStoryLine

        with self._transaction() as conn:
            rows = select(
                conn,
                "SELECT first_id, last_id, model, sources, source_hash, text FROM story_lines"
                " WHERE session_id = ? ORDER BY rowid",
                (session_id,),
            )
            lines: list[StoredStoryLine] = []
            for row in rows:
                try:
                    sources = tuple(int(part) for part in str(row["sources"]).split(",") if part)
                except ValueError:
                    continue  # not a line this code wrote
                lines.append(
                    StoredStoryLine(
                        first_id=int(row["first_id"]),
                        last_id=int(row["last_id"]),
                        model=str(row["model"]),
                        sources=sources,
                        source_hash=str(row["source_hash"]),
                        text=str(row["text"]),
                    )
                )
            return lines

    def save_story_line(self, session_id: int, line: StoredStoryLine) -> None:
        with self._transaction() as conn:
            if select_one(conn, "SELECT id FROM sessions WHERE id = ?", (session_id,)) is None:
                return  # the session went while the line was being written
            conn.execute(
                "INSERT OR REPLACE INTO story_lines"
                " (session_id, first_id, last_id, model, sources, source_hash, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    line.first_id,
                    line.last_id,
                    line.model,
                    ",".join(str(source) for source in line.sources),
                    line.source_hash,
                    line.text,
                ),
            )
