"""Messages' rows: adding, changing and reading a session's messages, a page at a time or whole.
A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

from engine.chat import HistoryCut, MessagePage, MessageStatus, Role, StoredMessage
from engine.errors import StoreError
from engine.text.moments import stored_moment
from sessions.database import Database
from sessions.rows import id_bound, inserted_id, now_text, select, select_in, select_one, value
from sessions.session_records import SHOWN_STATUSES, no_session
from sessions.session_stamps import SessionStamps

MESSAGE_COLUMNS = "id, session_id, role, content, status, created_at, tokens, model, error"
NOT_IN_CONVERSATION = ", ".join(
    f"'{s.value}'" for s in (MessageStatus.SUPERSEDED, MessageStatus.FAILED, MessageStatus.STREAMING)
)
"""The statuses of messages the model is not sent (see engine.curation.prompt.in_conversation)."""


_USER_OPENINGS = (
    "SELECT id, substr(content, 1, ?) AS opening FROM messages WHERE session_id = ? AND role = 'user'"
    f" AND status NOT IN ({NOT_IN_CONVERSATION})"
)
"""The first characters (a parameter) of a session's user messages in the conversation: where
standing instructions are recognised."""


def _opening_from(row: sqlite3.Row) -> tuple[int, str]:
    return int(row["id"]), str(row["opening"])


_ROLES: dict[str, Role] = {role: role for role in get_args(Role)}
"""Each role's one string: a long history read holds thousands of messages' roles, not a copy each."""


def message_from(row: sqlite3.Row) -> StoredMessage:
    """A :class:`StoredMessage` from a row of :data:`MESSAGE_COLUMNS`."""
    return StoredMessage(
        id=int(row["id"]),
        session_id=int(row["session_id"]),
        role=_ROLES.get(row["role"], row["role"]),
        content=str(row["content"]),
        status=MessageStatus(str(row["status"])),
        created_at=stored_moment(str(row["created_at"])),
        tokens=None if row["tokens"] is None else int(row["tokens"]),
        model=None if row["model"] is None else str(row["model"]),
        error=None if row["error"] is None else str(row["error"]),
    )


def _message(conn: sqlite3.Connection, message_id: int) -> StoredMessage:
    row = select_one(conn, f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,))
    if row is None:
        raise StoreError(f"There is no message {message_id}.")
    return message_from(row)


_SHOWN = f"session_id = ? AND status IN ({SHOWN_STATUSES})"


class MessageRecords(Database):
    """A session's messages (see the module), and which sessions another Heedful changed."""

    def __init__(self, path: Path) -> None:
        self._stamps = SessionStamps()
        """What this store last wrote or saw of each session (:mod:`sessions.session_stamps`)."""
        super().__init__(path)

    def add_message(
        self,
        session_id: int,
        role: Role,
        content: str,
        *,
        status: MessageStatus = MessageStatus.COMPLETE,
        tokens: int | None = None,
        model: str | None = None,
    ) -> StoredMessage:
        with self._transaction() as conn:
            self._stamps.before_write(conn, session_id)
            now = now_text()
            touched = conn.execute(
                "UPDATE sessions SET updated_at = ? WHERE id = ? AND deleted_at IS NULL", (now, session_id)
            )
            if touched.rowcount == 0:
                raise no_session(session_id)
            cursor = conn.execute(
                "INSERT INTO messages"
                " (session_id, role, content, status, tokens, model, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, role, content, status, tokens, model, now, now),
            )
            added = _message(conn, inserted_id(cursor))
            self._stamps.after_write(conn, session_id)
            return added

    def update_message(
        self,
        message_id: int,
        *,
        content: str | None = None,
        status: MessageStatus | None = None,
        tokens: int | None = None,
        error: str | None = None,
    ) -> StoredMessage:
        with self._transaction() as conn:
            owner = select_one(conn, "SELECT session_id FROM messages WHERE id = ?", (message_id,))
            if owner is not None:
                self._stamps.before_write(conn, int(owner["session_id"]))
            now = now_text()
            cursor = conn.execute(
                "UPDATE messages SET content = COALESCE(?, content), status = COALESCE(?, status),"
                " tokens = COALESCE(?, tokens), error = COALESCE(?, error), updated_at = ? WHERE id = ?",
                (content, status, tokens, error, now, message_id),
            )
            if cursor.rowcount == 0:
                raise StoreError(f"There is no message {message_id}; its session may have been deleted.")
            message = _message(conn, message_id)
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, message.session_id))
            self._stamps.after_write(conn, message.session_id)
            return message

    def changed_elsewhere(self, session_id: int) -> bool:
        with self._transaction() as conn:
            return self._stamps.changed_elsewhere(conn, session_id)

    def messages(self, session_id: int) -> list[StoredMessage]:
        return self._read(
            message_from,
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id",
            (session_id,),
        )

    def messages_after(
        self, session_id: int, message_id: int, *, limit: int, upto: int | None = None
    ) -> list[StoredMessage]:
        return self._read(
            message_from,
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? AND id <= ?"
            " ORDER BY id LIMIT ?",
            (session_id, message_id, id_bound(upto), limit),
        )

    def user_openings(
        self, session_id: int, *, after: int, upto: int, chars: int, limit: int
    ) -> list[tuple[int, str]]:
        return self._read(
            _opening_from,
            f"{_USER_OPENINGS} AND id > ? AND id <= ? ORDER BY id LIMIT ?",
            (chars, session_id, after, upto, limit),
        )

    def openings(self, session_id: int, ids: Sequence[int], *, chars: int) -> list[tuple[int, str]]:
        with self._transaction() as conn:
            rows = select_in(conn, f"{_USER_OPENINGS} AND id IN ({{}})", (chars, session_id), ids)
            return sorted(map(_opening_from, rows))

    def message_text(self, message_id: int) -> str:
        with self._transaction() as conn:
            return _message(conn, message_id).content

    def message_page(
        self, session_id: int, *, before: int | None = None, after: int | None = None, limit: int
    ) -> MessagePage:
        with self._transaction() as conn:
            self._stamps.seen(conn, session_id)
            if after is not None:
                rows = select(
                    conn,
                    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {_SHOWN} AND id > ? ORDER BY id LIMIT ?",
                    (session_id, after, limit),
                )
            else:
                rows = select(
                    conn,
                    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {_SHOWN} AND id < ?"
                    " ORDER BY id DESC LIMIT ?",
                    (session_id, id_bound(before), limit),
                )
                rows.reverse()
            messages = [message_from(row) for row in rows]
            if not messages:
                return MessagePage([], 0, 0)

            def count(condition: str, message_id: int) -> int:
                return int(
                    value(
                        conn,
                        f"SELECT COUNT(*) FROM messages WHERE {_SHOWN} AND {condition}",
                        (session_id, message_id),
                    )
                )

            return MessagePage(messages, count("id < ?", messages[0].id), count("id > ?", messages[-1].id))

    def history_cut(self, session_id: int, keep: int) -> HistoryCut | None:
        with self._transaction() as conn:
            row = select_one(
                conn,
                "SELECT id FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                (session_id, keep),
            )
            if row is None:
                return None
            after = int(row["id"])
            # The turns as the curation counts them: user messages that are part of the conversation.
            counts = select(
                conn,
                "SELECT COUNT(*) AS shown,"
                " COALESCE(SUM(role = 'user' AND status NOT IN ('failed', 'streaming')), 0) AS turns"
                f" FROM messages WHERE {_SHOWN} AND id <= ?",
                (session_id, after),
            )[0]
            return HistoryCut(
                after=after, earlier=int(counts["shown"]), earlier_turns=int(counts["turns"]), kept=keep
            )
