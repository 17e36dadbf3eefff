"""The story lines a model wrote (:mod:`sessions.story_line_records`) in and out of a transcript: on
its first line, in ``session.story_lines``, naming messages by their transcript ids, so an import
(whose messages get new row ids) uses them without asking the model again. Markdown lists them."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from engine.text.inert import inert_line
from sessions.rows import select

SESSION_FIRST_ID = 0
"""The first id of the session's line (:data:`engine.summaries.story_book.SESSION_FIRST_ID`)."""


class TranscriptStoryLine(BaseModel):
    """One story line a model wrote: ``first`` is None for the session's line."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    first: str | None
    last: str
    sources: list[str]
    model: str
    source_hash: str
    text: str


def dumped(
    conn: sqlite3.Connection, session_id: int, ids: Mapping[int, str]
) -> tuple[TranscriptStoryLine, ...]:
    """The session's stored story lines, their ids as the transcript writes them (``ids``: row id to
    transcript id); a line naming a message no longer there is left out."""
    lines: list[TranscriptStoryLine] = []
    for row in select(
        conn,
        "SELECT first_id, last_id, model, sources, source_hash, text FROM story_lines"
        " WHERE session_id = ? ORDER BY rowid",
        (session_id,),
    ):
        try:
            sources = [ids[int(part)] for part in str(row["sources"]).split(",") if part]
            first = None if int(row["first_id"]) == SESSION_FIRST_ID else ids[int(row["first_id"])]
            last = ids[int(row["last_id"])]
        except (KeyError, ValueError):
            continue
        lines.append(
            TranscriptStoryLine(
                first=first,
                last=last,
                sources=sources,
                model=str(row["model"]),
                source_hash=str(row["source_hash"]),
                text=str(row["text"]),
            )
        )
    return tuple(lines)


def stored(conn: sqlite3.Connection, session_id: int, lines: Sequence[TranscriptStoryLine]) -> None:
    """Store an imported session's story lines under its new row ids (a line naming an id the
    transcript does not have is left out)."""
    if not lines:
        return
    rows = select(conn, "SELECT id, transcript_id FROM messages WHERE session_id = ?", (session_id,))
    ids = {str(row["transcript_id"]): int(row["id"]) for row in rows if row["transcript_id"] is not None}
    values = []
    for line in lines:
        try:
            sources = ",".join(str(ids[source]) for source in line.sources)
            first = SESSION_FIRST_ID if line.first is None else ids[line.first]
            values.append(
                (session_id, first, ids[line.last], line.model, sources, line.source_hash, line.text)
            )
        except KeyError:
            continue
    conn.executemany(
        "INSERT OR REPLACE INTO story_lines"
        " (session_id, first_id, last_id, model, sources, source_hash, text) VALUES (?, ?, ?, ?, ?, ?, ?)",
        values,
    )


def markdown(lines: Sequence[TranscriptStoryLine]) -> str:
    """The story lines for reading: the session's first, then the segments' in order, each with the
    messages it tells of."""
    ordered = sorted(lines, key=lambda line: line.first is not None)
    said = "\n".join(_line(line) for line in ordered)
    return f"\nThe story so far, as the model told it:\n\n{said}\n" if said else ""


def _line(line: TranscriptStoryLine) -> str:
    ids = ", ".join(f"#{inert_line(source)}" for source in line.sources)
    return f"- [{ids}] {inert_line(' '.join(line.text.split()))}"
