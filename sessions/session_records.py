"""Sessions' rows: creating, finding, renaming and deleting sessions, their own settings, and the
app's state. A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

import sqlite3

from engine.chat import MessageStatus, Session, SessionSettings
from engine.errors import StoreError
from engine.text.moments import stored_moment
from sessions.database import Database
from sessions.rows import inserted_id, now_text, select_one

SHOWN_STATUSES = ", ".join(f"'{s.value}'" for s in MessageStatus if s != MessageStatus.SUPERSEDED)
"""Every status but superseded, as SQL: counts that name them read the index ``messages_shown``
alone, 3-4 times faster over a million-message session than ``status != 'superseded'``."""

SESSION_COLUMNS = f"""
    s.id AS id, s.title AS title, s.created_at AS created_at, s.updated_at AS updated_at,
    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.status IN ({SHOWN_STATUSES}))
        AS message_count
"""


def no_session(session_id: int) -> StoreError:
    """The error for a session that is not there (never made, deleted, or trashed)."""
    return StoreError(f"There is no session {session_id}; it may have been deleted.")


def session_from(row: sqlite3.Row) -> Session:
    """A :class:`Session` from a row of :data:`SESSION_COLUMNS`."""
    return Session(
        id=int(row["id"]),
        title=str(row["title"]),
        created_at=stored_moment(str(row["created_at"])),
        updated_at=stored_moment(str(row["updated_at"])),
        message_count=int(row["message_count"]),
    )


def find_session(conn: sqlite3.Connection, session_id: int, *, deleted: bool = False) -> Session | None:
    """The session, or None when there is none or it was deleted (trashed included); with
    ``deleted``, only a deleted (trashed) one."""
    row = select_one(
        conn,
        f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ? AND s.deleted_at IS "
        + ("NOT NULL" if deleted else "NULL"),
        (session_id,),
    )
    return None if row is None else session_from(row)


def existing_session(conn: sqlite3.Connection, session_id: int) -> Session:
    """The session.

    Raises:
        StoreError: There is no such session, or it was deleted.
    """
    found = find_session(conn, session_id)
    if found is None:
        raise no_session(session_id)
    return found


class SessionRecords(Database):
    """Sessions, their settings and the app's state (see the module)."""

    def create_session(self, title: str) -> Session:
        with self._transaction() as conn:
            now = now_text()
            cursor = conn.execute(
                "INSERT INTO sessions (title, created_at, updated_at) VALUES (?, ?, ?)", (title, now, now)
            )
            return existing_session(conn, inserted_id(cursor))

    def get_session(self, session_id: int) -> Session | None:
        with self._transaction() as conn:
            return find_session(conn, session_id)

    def latest_session(self) -> Session | None:
        with self._transaction() as conn:
            row = select_one(
                conn,
                f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.deleted_at IS NULL"
                " ORDER BY s.updated_at DESC, s.id DESC LIMIT 1",
            )
            return None if row is None else session_from(row)

    def list_sessions(self) -> list[Session]:
        return self._read(
            session_from,
            f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.deleted_at IS NULL"
            " ORDER BY s.updated_at DESC, s.id DESC",
        )

    def rename_session(self, session_id: int, title: str) -> Session:
        """Give a session a new title.

        Raises:
            ValueError: ``title`` is empty or only whitespace.
            StoreError: There is no such session.
        """
        clean = title.strip()
        if not clean:
            raise ValueError("a session title cannot be empty")
        with self._transaction() as conn:
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
            return existing_session(conn, session_id)

    def delete_session(self, session_id: int) -> None:
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def session_settings(self, session_id: int) -> SessionSettings:
        with self._transaction() as conn:
            row = select_one(
                conn,
                "SELECT system_prompt, model, profile, temperature FROM sessions WHERE id = ?",
                (session_id,),
            )
            if row is None:
                return SessionSettings()
            temperature = None if row["temperature"] is None else float(row["temperature"])
            return SessionSettings(
                system_prompt=row["system_prompt"],
                model=row["model"],
                profile=row["profile"],
                temperature=temperature,
            )

    def update_session_settings(self, session_id: int, settings: SessionSettings) -> None:
        with self._transaction() as conn:
            touched = conn.execute(
                "UPDATE sessions SET system_prompt = ?, model = ?, profile = ?, temperature = ? WHERE id = ?",
                (settings.system_prompt, settings.model, settings.profile, settings.temperature, session_id),
            )
            if touched.rowcount == 0:
                raise no_session(session_id)

    def get_state(self, key: str) -> str | None:
        with self._transaction() as conn:
            row = select_one(conn, "SELECT value FROM app_state WHERE key = ?", (key,))
            return None if row is None else str(row["value"])

    def set_state(self, key: str, value: str) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO app_state (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
