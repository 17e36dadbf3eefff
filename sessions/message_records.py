"""Messages and a session's own settings in SQLite: functions over an open connection, which
:class:`sessions.store.SqliteChatStore` runs inside its transactions."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import cast

from engine.chat import HistoryCut, MessagePage, MessageStatus, Role, SessionSettings, StoredMessage
from engine.errors import StoreError
from engine.text.moments import stored_moment
from sessions.session_rows import SHOWN_STATUSES

MESSAGE_COLUMNS = "id, session_id, role, content, status, created_at, tokens, model, error"


def now_text() -> str:
    """The current time as the store writes it (UTC, ISO 8601, microseconds)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def decode(row: sqlite3.Row | tuple[object, ...]) -> StoredMessage:
    """A :class:`StoredMessage` from a row of :data:`MESSAGE_COLUMNS`."""
    return StoredMessage(
        id=int(cast(int, row[0])),
        session_id=int(cast(int, row[1])),
        role=cast(Role, row[2]),
        content=str(row[3]),
        status=MessageStatus(str(row[4])),
        created_at=stored_moment(str(row[5])),
        tokens=None if row[6] is None else int(cast(int, row[6])),
        model=None if row[7] is None else str(row[7]),
        error=None if row[8] is None else str(row[8]),
    )


def get(conn: sqlite3.Connection, message_id: int) -> StoredMessage:
    return decode(_row(conn, MESSAGE_COLUMNS, message_id))


def text(conn: sqlite3.Connection, message_id: int) -> str:
    return str(_row(conn, "content", message_id)[0])


def _row(conn: sqlite3.Connection, columns: str, message_id: int) -> tuple[object, ...]:
    row: tuple[object, ...] | None = conn.execute(
        f"SELECT {columns} FROM messages WHERE id = ?", (message_id,)
    ).fetchone()
    if row is None:
        raise StoreError(f"There is no message {message_id}.")
    return row


def add(
    conn: sqlite3.Connection,
    session_id: int,
    role: Role,
    content: str,
    status: MessageStatus,
    *,
    tokens: int | None,
    model: str | None,
) -> StoredMessage:
    now = now_text()
    touched = conn.execute(
        "UPDATE sessions SET updated_at = ? WHERE id = ? AND deleted_at IS NULL", (now, session_id)
    )
    if touched.rowcount == 0:
        raise StoreError(f"There is no session {session_id}; it may have been deleted.")
    cursor = conn.execute(
        "INSERT INTO messages"
        " (session_id, role, content, status, tokens, model, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, role, content, status, tokens, model, now, now),
    )
    return get(conn, cast(int, cursor.lastrowid))


def update(
    conn: sqlite3.Connection,
    message_id: int,
    *,
    content: str | None,
    status: MessageStatus | None,
    tokens: int | None,
    error: str | None,
) -> StoredMessage:
    """Change the fields given (None: unchanged)."""
    now = now_text()
    cursor = conn.execute(
        "UPDATE messages SET content = COALESCE(?, content), status = COALESCE(?, status),"
        " tokens = COALESCE(?, tokens), error = COALESCE(?, error), updated_at = ? WHERE id = ?",
        (content, status, tokens, error, now, message_id),
    )
    if cursor.rowcount == 0:
        raise StoreError(f"There is no message {message_id}; its session may have been deleted.")
    message = get(conn, message_id)
    conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, message.session_id))
    return message


def of_session(conn: sqlite3.Connection, session_id: int) -> list[StoredMessage]:
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
    ).fetchall()
    return [decode(row) for row in rows]


def after(conn: sqlite3.Connection, session_id: int, message_id: int, limit: int) -> list[StoredMessage]:
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
        (session_id, message_id, limit),
    ).fetchall()
    return [decode(row) for row in rows]


_SHOWN = f"session_id = ? AND status IN ({SHOWN_STATUSES})"


def cut(conn: sqlite3.Connection, session_id: int, keep: int) -> HistoryCut | None:
    """See :meth:`engine.protocols.store.ChatStore.history_cut`."""
    row = conn.execute(
        "SELECT id FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?", (session_id, keep)
    ).fetchone()
    if row is None:
        return None
    after = int(row[0])
    # The turns as the curation counts them: user messages that are part of the conversation.
    shown, turns = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(role = 'user' AND status NOT IN ('failed', 'streaming')), 0)"
        f" FROM messages WHERE {_SHOWN} AND id <= ?",
        (session_id, after),
    ).fetchone()
    return HistoryCut(after=after, earlier=int(shown), earlier_turns=int(turns), kept=keep)


def page(
    conn: sqlite3.Connection, session_id: int, *, before: int | None, after: int | None, limit: int
) -> MessagePage:
    """Up to ``limit`` shown messages: the latest before message ``before`` (the session's latest
    when both are None), or the earliest after message ``after``."""
    if after is not None:
        rows = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {_SHOWN} AND id > ? ORDER BY id LIMIT ?",
            (session_id, after, limit),
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {_SHOWN} AND id < ? ORDER BY id DESC LIMIT ?",
            (session_id, before if before is not None else 2**63 - 1, limit),
        ).fetchall()
        rows.reverse()
    messages = [decode(row) for row in rows]
    if not messages:
        return MessagePage([], 0, 0)

    def count(condition: str, message_id: int) -> int:
        row = conn.execute(
            f"SELECT COUNT(*) FROM messages WHERE {_SHOWN} AND {condition}", (session_id, message_id)
        )
        return int(row.fetchone()[0])

    return MessagePage(messages, count("id < ?", messages[0].id), count("id > ?", messages[-1].id))


def session_settings(conn: sqlite3.Connection, session_id: int) -> SessionSettings:
    row = conn.execute(
        "SELECT system_prompt, model, profile, temperature FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return SessionSettings()
    temperature = None if row[3] is None else float(row[3])
    return SessionSettings(system_prompt=row[0], model=row[1], profile=row[2], temperature=temperature)


def update_session_settings(conn: sqlite3.Connection, session_id: int, settings: SessionSettings) -> None:
    touched = conn.execute(
        "UPDATE sessions SET system_prompt = ?, model = ?, profile = ?, temperature = ? WHERE id = ?",
        (settings.system_prompt, settings.model, settings.profile, settings.temperature, session_id),
    )
    if touched.rowcount == 0:
        raise StoreError(f"There is no session {session_id}; it may have been deleted.")
