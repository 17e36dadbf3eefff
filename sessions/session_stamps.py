"""Which sessions another connection (another Heedful on the same database) changed since this one
last wrote to them or looked: each message written stamps its session's ``updated_at``, so a stamp
this store neither wrote nor saw was written by someone else."""

from __future__ import annotations

import sqlite3

from sessions.rows import select_one


def _stamp(conn: sqlite3.Connection, session_id: int) -> str | None:
    row = select_one(conn, "SELECT updated_at FROM sessions WHERE id = ?", (session_id,))
    return str(row["updated_at"]) if row is not None else None


class SessionStamps:
    """Per session, the last ``updated_at`` this store knows of, and whether one it did not write
    came between. Every method runs inside the store's transaction (one writer at a time)."""

    def __init__(self) -> None:
        self._seen: dict[int, str | None] = {}
        self._changed: set[int] = set()

    def before_write(self, conn: sqlite3.Connection, session_id: int) -> None:
        """About to write to the session: a stamp other than the last one known is someone else's."""
        if session_id in self._seen and _stamp(conn, session_id) != self._seen[session_id]:
            self._changed.add(session_id)

    def after_write(self, conn: sqlite3.Connection, session_id: int) -> None:
        self._seen[session_id] = _stamp(conn, session_id)

    def seen(self, conn: sqlite3.Connection, session_id: int) -> None:
        """The session was read (opened on screen): what it holds now is what this store knows."""
        if session_id not in self._seen:
            self._seen[session_id] = _stamp(conn, session_id)

    def changed_elsewhere(self, conn: sqlite3.Connection, session_id: int) -> bool:
        """Whether someone else changed the session since this store last looked; now it has."""
        stamp = _stamp(conn, session_id)
        changed = session_id in self._changed or (
            session_id in self._seen and stamp != self._seen[session_id]
        )
        self._seen[session_id] = stamp
        self._changed.discard(session_id)
        return changed
