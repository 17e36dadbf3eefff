"""Cross-session memories (see :mod:`engine.memory.memories`): the ``memories`` table and
``sessions.memory_through``. A part of :class:`sessions.store.SqliteChatStore`; it implements
:class:`engine.protocols.memory.MemoryStore`.

Times are passed in by the caller (engine.memory.memories's rules run on an injected clock) and
stored as UTC ISO text, which sorts and compares as time does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import inserted_id, select_one
from sessions.session_records import no_session

if TYPE_CHECKING:
    from engine.errors import StoreError
    from engine.memory.memories import Memory

_MEMORY_COLUMNS = (
    "id, session_id, summary, importance, tags, topics, reasoning, pinned, created_at, updated_at, expires_at"
)


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _labels(raw: object) -> tuple[str, ...]:
    value = json.loads(str(raw))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"a memory's labels are not a list of strings: {str(raw)[:60]!r}")
    return tuple(value)


def _memory_from(row: sqlite3.Row) -> Memory:
    from engine.memory.memories import Memory
    from engine.text.moments import stored_moment

    return Memory(
        id=int(row["id"]),
        session_id=None if row["session_id"] is None else int(row["session_id"]),
        summary=str(row["summary"]),
        importance=float(row["importance"]),
        tags=_labels(row["tags"]),
        topics=_labels(row["topics"]),
        reasoning=str(row["reasoning"]),
        pinned=bool(row["pinned"]),
        created_at=stored_moment(str(row["created_at"])),
        updated_at=stored_moment(str(row["updated_at"])),
        expires_at=None if row["expires_at"] is None else stored_moment(str(row["expires_at"])),
    )


def _find(conn: sqlite3.Connection, memory_id: int) -> Memory | None:
    row = select_one(conn, f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
    return None if row is None else _memory_from(row)


def _gone(memory_id: int) -> StoreError:
    from engine.errors import StoreError

    return StoreError(f"There is no memory {memory_id}; it may have been deleted or expired.")


class MemoryRecords(Database):
    """The memories part of the store (see the module)."""

    def add_memory(
        self,
        session_id: int | None,
        *,
        summary: str,
        importance: float,
        tags: Sequence[str] = (),
        topics: Sequence[str] = (),
        reasoning: str = "",
        now: datetime,
        expires_at: datetime | None,
        through: int | None = None,
    ) -> Memory:
        """Store a memory; with ``through``, also note that the session is assessed up to that message.

        Both in one transaction, so a memory is never written twice for the same messages.

        Raises:
            StoreError: The write failed (the session may have been deleted), nothing changed.
        """
        from engine.errors import StoreError

        with self._transaction() as conn:
            if through is not None and session_id is not None:
                found = conn.execute(
                    "UPDATE sessions SET memory_through = MAX(memory_through, ?) WHERE id = ?",
                    (through, session_id),
                )
                if found.rowcount == 0:
                    raise no_session(session_id)
            cursor = conn.execute(
                "INSERT INTO memories (session_id, summary, importance, tags, topics, reasoning, pinned,"
                " created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
                (
                    session_id,
                    summary,
                    importance,
                    json.dumps(list(tags), ensure_ascii=False),
                    json.dumps(list(topics), ensure_ascii=False),
                    reasoning,
                    _utc(now),
                    _utc(now),
                    None if expires_at is None else _utc(expires_at),
                ),
            )
            added = _find(conn, inserted_id(cursor))
            if added is None:
                raise StoreError(f"There is no memory {cursor.lastrowid}.")
            return added

    def list_memories(self) -> list[Memory]:
        """Every memory, expired ones included until :meth:`expire_memories` removes them; newest first."""
        return self._read(
            _memory_from, f"SELECT {_MEMORY_COLUMNS} FROM memories ORDER BY created_at DESC, id DESC"
        )

    def get_memory(self, memory_id: int) -> Memory | None:
        with self._transaction() as conn:
            return _find(conn, memory_id)

    def update_memory(
        self,
        memory_id: int,
        *,
        now: datetime,
        summary: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        pinned: bool | None = None,
        set_expiry: bool = False,
        expires_at: datetime | None = None,
    ) -> Memory:
        """Change the given fields of a memory (None keeps a field); ``set_expiry`` writes ``expires_at``.

        Raises:
            StoreError: There is no such memory, or the write failed.
        """
        with self._transaction() as conn:
            conn.execute(
                "UPDATE memories SET summary = COALESCE(?, summary), importance = COALESCE(?, importance),"
                " tags = COALESCE(?, tags), pinned = COALESCE(?, pinned),"
                " expires_at = CASE WHEN ? THEN ? ELSE expires_at END, updated_at = ? WHERE id = ?",
                (
                    summary,
                    importance,
                    None if tags is None else json.dumps(list(tags), ensure_ascii=False),
                    None if pinned is None else int(pinned),
                    int(set_expiry),
                    None if expires_at is None else _utc(expires_at),
                    _utc(now),
                    memory_id,
                ),
            )
            updated = _find(conn, memory_id)
            if updated is None:
                raise _gone(memory_id)
            return updated

    def delete_memory(self, memory_id: int) -> None:
        """Delete a memory (the user asked for it).

        Raises:
            StoreError: There is no such memory, or the write failed.
        """
        with self._transaction() as conn:
            if conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount == 0:
                raise _gone(memory_id)

    def expire_memories(self, now: datetime) -> int:
        """Delete every memory past its expiry at ``now`` (pinned ones never); how many went."""
        with self._transaction() as conn:
            return conn.execute(
                "DELETE FROM memories WHERE pinned = 0 AND expires_at IS NOT NULL AND expires_at <= ?",
                (_utc(now),),
            ).rowcount

    def memories_for_prompt(
        self,
        now: datetime,
        *,
        min_importance: float,
        exclude_session: int | None = None,
        limit: int = 50,
    ) -> list[Memory]:
        """Candidates for a prompt's memory section: pinned or at least ``min_importance``, not
        expired at ``now``, not from ``exclude_session``; pinned first, then newest first.
        :func:`engine.memory.memories.select_for_prompt` makes the final choice."""
        return self._read(
            _memory_from,
            f"SELECT {_MEMORY_COLUMNS} FROM memories"
            " WHERE (pinned = 1 OR importance >= ?)"
            " AND (pinned = 1 OR expires_at IS NULL OR expires_at > ?)"
            " AND (? IS NULL OR session_id IS NULL OR session_id != ?)"
            " ORDER BY pinned DESC, created_at DESC, id DESC LIMIT ?",
            (min_importance, _utc(now), exclude_session, exclude_session, limit),
        )

    def memory_through(self, session_id: int) -> int:
        with self._transaction() as conn:
            row = select_one(conn, "SELECT memory_through FROM sessions WHERE id = ?", (session_id,))
            if row is None:
                raise no_session(session_id)
            return int(row["memory_through"])
