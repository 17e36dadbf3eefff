"""Reading sessions' rows: the columns a :class:`engine.chat.Session` is built from, and lookups by id.

Shared by :mod:`sessions.store` and :mod:`sessions.search_records`; functions over an open connection.
"""

from __future__ import annotations

import sqlite3
from typing import cast

from engine.chat import MessageStatus, Session
from engine.errors import StoreError
from engine.text.moments import stored_moment

SHOWN_STATUSES = ", ".join(f"'{s.value}'" for s in MessageStatus if s != MessageStatus.SUPERSEDED)
"""Every status but superseded, as SQL: counts that name them read the index ``messages_shown``
alone, 3-4 times faster over a million-message session than ``status != 'superseded'``."""

SESSION_COLUMNS = f"""
    s.id, s.title, s.created_at, s.updated_at,
    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.status IN ({SHOWN_STATUSES}))
"""


def decode_session(row: sqlite3.Row | tuple[object, ...]) -> Session:
    """A :class:`Session` from a row of :data:`SESSION_COLUMNS`."""
    return Session(
        id=int(cast(int, row[0])),
        title=str(row[1]),
        created_at=stored_moment(str(row[2])),
        updated_at=stored_moment(str(row[3])),
        message_count=int(cast(int, row[4])),
    )


def find_session(conn: sqlite3.Connection, session_id: int) -> Session | None:
    """The session, or None when there is none or it was deleted (trashed included)."""
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ? AND s.deleted_at IS NULL",
        (session_id,),
    ).fetchone()
    return None if row is None else decode_session(row)


def get_session(conn: sqlite3.Connection, session_id: int) -> Session:
    """The session.

    Raises:
        StoreError: There is no such session, or it was deleted.
    """
    found = find_session(conn, session_id)
    if found is None:
        raise StoreError(f"There is no session {session_id}; it may have been deleted.")
    return found
