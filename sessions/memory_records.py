"""Cross-session memories (see :mod:`engine.memory.memories`): the ``memories`` table and
``sessions.memory_through``.

Both arrived with schema v5. Times are passed in by the caller (engine.memory.memories's rules run on an
injected clock) and stored as UTC ISO text, which sorts and compares as time does.

Functions over an open connection; :class:`sessions.store.SqliteChatStore` runs each one in a
transaction under its lock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import cast

from engine.errors import StoreError
from engine.memory.memories import Memory
from engine.text.moments import stored_moment

_MEMORY_COLUMNS = (
    "id, session_id, summary, importance, tags, topics, reasoning, pinned, created_at, updated_at, expires_at"
)


def add(
    conn: sqlite3.Connection,
    session_id: int | None,
    *,
    summary: str,
    importance: float,
    tags: Sequence[str],
    topics: Sequence[str],
    reasoning: str,
    now: datetime,
    expires_at: datetime | None,
    through: int | None,
) -> Memory:
    """Store a memory; with ``through``, also note that the session is assessed up to that message.

    Raises:
        StoreError: There is no session ``session_id`` (only checked with ``through``).
    """
    if through is not None and session_id is not None:
        found = conn.execute(
            "UPDATE sessions SET memory_through = MAX(memory_through, ?) WHERE id = ?",
            (through, session_id),
        )
        if found.rowcount == 0:
            raise StoreError(f"There is no session {session_id}; it may have been deleted.")
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
    return _get(conn, cast(int, cursor.lastrowid))


def list_all(conn: sqlite3.Connection) -> list[Memory]:
    """Every memory, expired ones included until :func:`expire` removes them; newest first."""
    rows = conn.execute(
        f"SELECT {_MEMORY_COLUMNS} FROM memories ORDER BY created_at DESC, id DESC"
    ).fetchall()
    return [_decode(row) for row in rows]


def get(conn: sqlite3.Connection, memory_id: int) -> Memory | None:
    row = conn.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return None if row is None else _decode(row)


def update(
    conn: sqlite3.Connection,
    memory_id: int,
    *,
    now: datetime,
    summary: str | None,
    importance: float | None,
    tags: Sequence[str] | None,
    pinned: bool | None,
    set_expiry: bool,
    expires_at: datetime | None,
) -> Memory:
    """Change the given fields of a memory (None keeps a field); ``set_expiry`` writes ``expires_at``.

    Raises:
        StoreError: There is no such memory.
    """
    cursor = conn.execute(
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
    if cursor.rowcount == 0:
        raise StoreError(f"There is no memory {memory_id}; it may have been deleted or expired.")
    return _get(conn, memory_id)


def delete(conn: sqlite3.Connection, memory_id: int) -> None:
    """Delete a memory.

    Raises:
        StoreError: There is no such memory.
    """
    if conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount == 0:
        raise StoreError(f"There is no memory {memory_id}; it may have been deleted or expired.")


def expire(conn: sqlite3.Connection, now: datetime) -> int:
    """Delete every memory past its expiry at ``now`` (pinned ones never); how many went."""
    return conn.execute(
        "DELETE FROM memories WHERE pinned = 0 AND expires_at IS NOT NULL AND expires_at <= ?",
        (_utc(now),),
    ).rowcount


def for_prompt(
    conn: sqlite3.Connection,
    now: datetime,
    *,
    min_importance: float,
    exclude_session: int | None,
    limit: int,
) -> list[Memory]:
    """Candidates for a prompt's memory section: pinned or at least ``min_importance``, not
    expired at ``now``, not from ``exclude_session``; pinned first, then newest first."""
    rows = conn.execute(
        f"SELECT {_MEMORY_COLUMNS} FROM memories"
        " WHERE (pinned = 1 OR importance >= ?)"
        " AND (pinned = 1 OR expires_at IS NULL OR expires_at > ?)"
        " AND (? IS NULL OR session_id IS NULL OR session_id != ?)"
        " ORDER BY pinned DESC, created_at DESC, id DESC LIMIT ?",
        (
            min_importance,
            _utc(now),
            exclude_session,
            exclude_session,
            limit,
        ),
    ).fetchall()
    return [_decode(row) for row in rows]


def memory_through(conn: sqlite3.Connection, session_id: int) -> int:
    """The id of the last message of the session an assessment covered (0: none yet).

    Raises:
        StoreError: There is no such session.
    """
    row = conn.execute("SELECT memory_through FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise StoreError(f"There is no session {session_id}; it may have been deleted.")
    return int(row[0])


def _get(conn: sqlite3.Connection, memory_id: int) -> Memory:
    row = conn.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise StoreError(f"There is no memory {memory_id}.")
    return _decode(row)


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _decode(row: sqlite3.Row | tuple[object, ...]) -> Memory:
    def labels(raw: object) -> tuple[str, ...]:
        value = json.loads(str(raw))
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"a memory's labels are not a list of strings: {str(raw)[:60]!r}")
        return tuple(value)

    return Memory(
        id=int(cast(int, row[0])),
        session_id=None if row[1] is None else int(cast(int, row[1])),
        summary=str(row[2]),
        importance=float(cast(float, row[3])),
        tags=labels(row[4]),
        topics=labels(row[5]),
        reasoning=str(row[6]),
        pinned=bool(row[7]),
        created_at=stored_moment(str(row[8])),
        updated_at=stored_moment(str(row[9])),
        expires_at=None if row[10] is None else stored_moment(str(row[10])),
    )
