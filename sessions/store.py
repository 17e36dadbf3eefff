"""Sessions and messages in SQLite: the :class:`engine.protocols.ChatStore` the app runs on.

One connection per store, in autocommit mode with explicit transactions, WAL journalling and
``synchronous=NORMAL``: a committed message survives the app being killed (WAL with NORMAL can lose
the last transactions only on power loss, not on a process crash). The connection is shared by the
event loop's worker threads, so every call holds a lock.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from engine.chat import MessageStatus, Role, Session, SessionSettings, StoredMessage
from engine.consent import ConsentChoice
from engine.errors import StoreError
from engine.ledger import LedgerEntry
from engine.memory import Memory
from engine.protocols import CurationSnapshot, ItemRecord
from engine.registry import EntityRecord
from sessions import curation_records
from sessions.migrations import check_version, migrate
from sessions.paths import ensure_private_dir

if TYPE_CHECKING:
    from sessions.exchange import SessionDump, Stored

if sys.platform != "win32":
    import fcntl
else:  # pragma: no cover - no flock on Windows: every open finishes abandoned replies
    fcntl = None

INTERRUPTED_BY_EXIT = "Heedful closed before this reply finished."

_T = TypeVar("_T")

_SESSION_COLUMNS = """
    s.id, s.title, s.created_at, s.updated_at,
    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.status != 'superseded')
"""
_MESSAGE_COLUMNS = "id, session_id, role, content, status, created_at, tokens, model, error"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _session(row: sqlite3.Row | tuple[object, ...]) -> Session:
    return Session(
        id=int(cast(int, row[0])),
        title=str(row[1]),
        created_at=datetime.fromisoformat(str(row[2])),
        updated_at=datetime.fromisoformat(str(row[3])),
        message_count=int(cast(int, row[4])),
    )


def _message(row: sqlite3.Row | tuple[object, ...]) -> StoredMessage:
    return StoredMessage(
        id=int(cast(int, row[0])),
        session_id=int(cast(int, row[1])),
        role=cast(Role, row[2]),
        content=str(row[3]),
        status=MessageStatus(str(row[4])),
        created_at=datetime.fromisoformat(str(row[5])),
        tokens=None if row[6] is None else int(cast(int, row[6])),
        model=None if row[7] is None else str(row[7]),
        error=None if row[8] is None else str(row[8]),
    )


def _describe(err: sqlite3.Error, where: str) -> str:
    """One sentence for the user about ``err``, decided by SQLite's error code, not its wording."""
    text = str(err)
    code = getattr(err, "sqlite_errorname", "")
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return f"The database at {where} is busy (another program holds a lock); try again in a moment."
    if code.startswith("SQLITE_READONLY"):
        return (
            f"The database at {where} is read-only ({text}): check that you may write the file and "
            "its directory."
        )
    if code == "SQLITE_FULL" or code.startswith("SQLITE_IOERR"):
        # A full disk (or a file-size limit) shows up as SQLITE_FULL or as a failed write.
        return (
            f"Could not save to the database at {where}: the disk is full or cannot be written ({text}). "
            "This change was not saved; what was saved before is intact. Free some space and try again."
        )
    if code.startswith("SQLITE_CANTOPEN"):
        return f"Could not open the database at {where} ({text}): check that its directory can be written."
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return (
            f"The database at {where} is damaged ({text}). Quit Heedful and move the file aside to start "
            "a new one; the old file may still be recovered with SQLite's .recover command."
        )
    return f"The database at {where} failed: {text}."


class SqliteChatStore:
    """Sessions, messages and app state in one SQLite file.

    Every method commits before it returns and raises :class:`StoreError` (with a sentence for the
    user) instead of ``sqlite3.Error``.
    """

    def __init__(self, path: Path) -> None:
        """Open (creating if needed) and migrate the database at ``path``; ``:memory:`` works too.

        Raises:
            StoreError: The file is not a database, is newer than this code, or cannot be opened.
        """
        self._where = str(path)
        self._lock = threading.Lock()
        self._holder: int | None = None
        self._trashed: list[int] = []
        """Sessions this store hid with :meth:`trash_session`, the latest last; deleted when it closes."""
        """The open lock file that tells other Heedful processes this database is in use."""
        in_memory = str(path) == ":memory:"
        alone = True
        try:
            if not in_memory:
                ensure_private_dir(path.parent)
                _create_private(path)
                self._holder, alone = _hold(path)
            # check_same_thread=False: calls come from asyncio.to_thread workers; the lock serializes them.
            self._conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=5.0
            )
        except OSError as err:
            where = f" ({err.filename})" if err.filename and str(err.filename) != str(path) else ""
            raise StoreError(f"Could not open the database at {path}: {err.strerror or err}{where}.") from err
        except sqlite3.Error as err:
            raise StoreError(_describe(err, self._where)) from err
        try:
            self._conn.execute("PRAGMA busy_timeout = 5000")
            # Before anything writes: switching to WAL rewrites the header of a file we must not touch.
            check_version(self._conn, self._where)
            if not in_memory:
                _check_whole_pages(self._conn, path)
                mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise sqlite3.OperationalError(f"could not switch to WAL journalling (got {mode})")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            migrate(self._conn)
            if alone:
                # Only when no other Heedful has the database open: another app's "streaming"
                # reply is being written right now, not abandoned.
                self._finish_abandoned_replies()
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as err:
            self.close()
            raise StoreError(_describe(err, self._where)) from err

    # --- plumbing ----------------------------------------------------------------------------

    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` in one transaction under the lock; map sqlite errors to StoreError."""
        with self._lock:
            try:
                with self._transaction():
                    return work(self._conn)
            except sqlite3.Error as err:
                raise StoreError(_describe(err, self._where)) from err
            except ValueError as err:
                # A row that does not decode (a status, a date, a JSON column) was damaged on disk.
                raise StoreError(
                    f"The database at {self._where} is damaged: a stored row could not be read ({err})."
                ) from err

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction: committed if the body and the COMMIT succeed, otherwise rolled back.

        The original error always wins: after a failed write (a full disk, say) SQLite may already
        have rolled back by itself, and a ROLLBACK failing then must not hide why.
        """
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise

    def _finish_abandoned_replies(self) -> None:
        # A reply still "streaming" when the store opens was cut off by the app exiting or being
        # killed: keep its text and say what happened.
        def work(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE messages SET status = ?, error = COALESCE(error, ?), updated_at = ? WHERE status = ?",
                (MessageStatus.INTERRUPTED, INTERRUPTED_BY_EXIT, _now(), MessageStatus.STREAMING),
            )

        with self._transaction():
            work(self._conn)
            # Sessions deleted in an app that was killed before it could delete them for real.
            self._conn.execute("DELETE FROM sessions WHERE deleted_at IS NOT NULL")

    # --- sessions ----------------------------------------------------------------------------

    def create_session(self, title: str) -> Session:
        def work(conn: sqlite3.Connection) -> Session:
            now = _now()
            cursor = conn.execute(
                "INSERT INTO sessions (title, created_at, updated_at) VALUES (?, ?, ?)", (title, now, now)
            )
            return self._get_session(conn, cast(int, cursor.lastrowid))

        return self._run(work)

    def get_session(self, session_id: int) -> Session | None:
        return self._run(lambda conn: self._find_session(conn, session_id))

    def latest_session(self) -> Session | None:
        def work(conn: sqlite3.Connection) -> Session | None:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.deleted_at IS NULL"
                " ORDER BY s.updated_at DESC, s.id DESC LIMIT 1"
            ).fetchone()
            return None if row is None else _session(row)

        return self._run(work)

    def list_sessions(self) -> list[Session]:
        def work(conn: sqlite3.Connection) -> list[Session]:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.deleted_at IS NULL"
                " ORDER BY s.updated_at DESC, s.id DESC"
            ).fetchall()
            return [_session(row) for row in rows]

        return self._run(work)

    def rename_session(self, session_id: int, title: str) -> Session:
        """Give a session a new title.

        Raises:
            ValueError: ``title`` is empty or only whitespace.
            StoreError: There is no such session.
        """
        clean = title.strip()
        if not clean:
            raise ValueError("a session title cannot be empty")

        def work(conn: sqlite3.Connection) -> Session:
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
            return self._get_session(conn, session_id)

        return self._run(work)

    def delete_session(self, session_id: int) -> None:
        self._run(lambda conn: conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)))

    def _find_session(self, conn: sqlite3.Connection, session_id: int) -> Session | None:
        row = conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ? AND s.deleted_at IS NULL",
            (session_id,),
        ).fetchone()
        return None if row is None else _session(row)

    def _get_session(self, conn: sqlite3.Connection, session_id: int) -> Session:
        found = self._find_session(conn, session_id)
        if found is None:
            raise StoreError(f"There is no session {session_id}; it may have been deleted.")
        return found

    # --- messages ----------------------------------------------------------------------------

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
        def work(conn: sqlite3.Connection) -> StoredMessage:
            now = _now()
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
            return self._get_message(conn, cast(int, cursor.lastrowid))

        return self._run(work)

    def update_message(
        self,
        message_id: int,
        *,
        content: str | None = None,
        status: MessageStatus | None = None,
        tokens: int | None = None,
        error: str | None = None,
    ) -> StoredMessage:
        def work(conn: sqlite3.Connection) -> StoredMessage:
            now = _now()
            cursor = conn.execute(
                "UPDATE messages SET content = COALESCE(?, content), status = COALESCE(?, status),"
                " tokens = COALESCE(?, tokens), error = COALESCE(?, error), updated_at = ? WHERE id = ?",
                (content, status, tokens, error, now, message_id),
            )
            if cursor.rowcount == 0:
                raise StoreError(f"There is no message {message_id}; its session may have been deleted.")
            message = self._get_message(conn, message_id)
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, message.session_id))
            return message

        return self._run(work)

    def messages(self, session_id: int) -> list[StoredMessage]:
        def work(conn: sqlite3.Connection) -> list[StoredMessage]:
            rows = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
            return [_message(row) for row in rows]

        return self._run(work)

    def _get_message(self, conn: sqlite3.Connection, message_id: int) -> StoredMessage:
        row = conn.execute(f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise StoreError(f"There is no message {message_id}.")
        return _message(row)

    # --- curation -------------------------------------------------------------------------------

    def load_curation(self, session_id: int) -> CurationSnapshot:
        return self._run(lambda conn: curation_records.load(conn, session_id))

    def save_curation(
        self,
        session_id: int,
        *,
        items: Sequence[ItemRecord],
        entities: Sequence[EntityRecord],
        ledger: Sequence[LedgerEntry],
        policy: ConsentChoice | None = None,
        policy_changed: bool = False,
        saved_tokens: int = 0,
    ) -> None:
        self._run(
            lambda conn: curation_records.save(
                conn,
                session_id,
                items=items,
                entities=entities,
                ledger=ledger,
                policy=policy,
                policy_changed=policy_changed,
                saved_tokens=saved_tokens,
                now=_now(),
            )
        )

    def ledger(self, session_id: int, *, target: str | None = None) -> list[LedgerEntry]:
        return self._run(lambda conn: curation_records.read_ledger(conn, session_id, target))

    # --- search, trash, export and import (issue 6; see sessions.exchange) --------------------

    def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """Messages of every session matching ``query``, the best first (FTS5's bm25).

        Each whitespace-separated piece of ``query`` must match, its words as a phrase and the last
        one as a word start (see :func:`fts_query`), so any text is a valid query: FTS5's own syntax
        (quotes, AND, NEAR, ``*``) is never interpreted. Superseded replies and deleted sessions are
        left out.
        """
        match = fts_query(query)
        if match is None or limit <= 0:
            return []

        def work(conn: sqlite3.Connection) -> list[SearchHit]:
            rows = conn.execute(
                "SELECT m.session_id, s.title, m.id, m.role, m.created_at,"
                " snippet(messages_fts, 0, ?, ?, '…', 16), bm25(messages_fts) AS rank"
                " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
                " JOIN sessions s ON s.id = m.session_id"
                " WHERE messages_fts MATCH ? AND m.status != 'superseded' AND s.deleted_at IS NULL"
                " ORDER BY rank, m.id DESC LIMIT ?",
                (_MATCH_START, _MATCH_END, match, limit),
            ).fetchall()
            return [_hit(row) for row in rows]

        return self._run(work)

    def trash_session(self, session_id: int) -> Session:
        """Hide a session as if deleted, until :meth:`restore_session` or until this store closes.

        Raises:
            StoreError: There is no such session.
        """

        def work(conn: sqlite3.Connection) -> Session:
            session = self._get_session(conn, session_id)
            conn.execute("UPDATE sessions SET deleted_at = ? WHERE id = ?", (_now(), session_id))
            self._trashed.append(session_id)  # under the lock, as every use of the list
            return session

        return self._run(work)

    def restore_session(self, session_id: int) -> Session:
        """Undo :meth:`trash_session`.

        Raises:
            StoreError: The session is gone (its store closed, or it was never trashed here).
        """

        def work(conn: sqlite3.Connection) -> Session:
            if session_id not in self._trashed:
                raise StoreError(f"The session {session_id} cannot be restored: it was deleted for good.")
            conn.execute("UPDATE sessions SET deleted_at = NULL WHERE id = ?", (session_id,))
            session = self._get_session(conn, session_id)
            self._trashed.remove(session_id)
            return session

        return self._run(work)

    def trashed_sessions(self) -> list[Session]:
        """The sessions this store trashed that can still be restored, the latest first."""

        def work(conn: sqlite3.Connection) -> list[Session]:
            found = []
            for session_id in reversed(self._trashed):
                row = conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ? AND s.deleted_at IS NOT NULL",
                    (session_id,),
                ).fetchone()
                if row is not None:
                    found.append(_session(row))
            return found

        return self._run(work)

    def purge_trash(self) -> None:
        """Delete for real the sessions this store trashed."""

        def work(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "DELETE FROM sessions WHERE id = ? AND deleted_at IS NOT NULL", [(i,) for i in self._trashed]
            )
            self._trashed.clear()

        self._run(work)

    def dump_session(self, session_id: int) -> SessionDump:
        """Everything about a session, for export (:mod:`sessions.exchange`).

        Raises:
            StoreError: There is no such session.
        """
        from sessions import exchange

        def work(conn: sqlite3.Connection) -> SessionDump:
            found = exchange.dump(conn, session_id)
            if found is None:
                raise StoreError(f"There is no session {session_id}; it may have been deleted.")
            return found

        return self._run(work)

    def import_session(self, session: SessionDump, *, source: str) -> Stored:
        """Store ``session`` as a new session, in one transaction (:func:`sessions.exchange.store`)."""
        from sessions import exchange

        return self._run(lambda conn: exchange.store(conn, session, source=source, now=datetime.now(UTC)))

    # --- app state ---------------------------------------------------------------------------

    def session_settings(self, session_id: int) -> SessionSettings:
        def work(conn: sqlite3.Connection) -> SessionSettings:
            row = conn.execute(
                "SELECT system_prompt, model, profile, temperature FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return SessionSettings()
            temperature = None if row[3] is None else float(row[3])
            return SessionSettings(
                system_prompt=row[0], model=row[1], profile=row[2], temperature=temperature
            )

        return self._run(work)

    def update_session_settings(self, session_id: int, settings: SessionSettings) -> None:
        def work(conn: sqlite3.Connection) -> None:
            touched = conn.execute(
                "UPDATE sessions SET system_prompt = ?, model = ?, profile = ?, temperature = ? WHERE id = ?",
                (settings.system_prompt, settings.model, settings.profile, settings.temperature, session_id),
            )
            if touched.rowcount == 0:
                raise StoreError(f"There is no session {session_id}; it may have been deleted.")

        self._run(work)

    def get_state(self, key: str) -> str | None:
        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM app_state WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        return self._run(work)

    def set_state(self, key: str, value: str) -> None:
        self._run(
            lambda conn: conn.execute(
                "INSERT INTO app_state (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

    def integrity_problems(self) -> list[str]:
        """What ``PRAGMA integrity_check`` reports; empty when the database is sound."""
        with self._lock:
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        return [str(row[0]) for row in rows if row[0] != "ok"]

    def close(self) -> None:
        """Delete for real the sessions this store trashed, then close the database."""
        if self._trashed:
            with suppress(StoreError):  # a read-only or full disk: the next open deletes them
                self.purge_trash()
        with self._lock:
            self._conn.close()
            if self._holder is not None:
                os.close(self._holder)  # releases the lock
                self._holder = None

    # --- memories (cross-session memory, see engine.memory) -----------------------------------
    # Kept together: the memories table and sessions.memory_through (schema v5). Times are passed
    # in by the caller (engine.memory's rules run on an injected clock) and stored as UTC ISO text,
    # which sorts and compares as time does.

    _MEMORY_COLUMNS = (
        "id, session_id, summary, importance, tags, topics, reasoning, pinned, created_at, updated_at,"
        " expires_at"
    )

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
        import json

        def work(conn: sqlite3.Connection) -> Memory:
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
                    self._utc(now),
                    self._utc(now),
                    None if expires_at is None else self._utc(expires_at),
                ),
            )
            return self._get_memory(conn, cast(int, cursor.lastrowid))

        return self._run(work)

    def list_memories(self) -> list[Memory]:
        """Every memory, expired ones included until :meth:`expire_memories` removes them; newest first."""

        def work(conn: sqlite3.Connection) -> list[Memory]:
            rows = conn.execute(
                f"SELECT {self._MEMORY_COLUMNS} FROM memories ORDER BY created_at DESC, id DESC"
            ).fetchall()
            return [self._decode_memory(row) for row in rows]

        return self._run(work)

    def get_memory(self, memory_id: int) -> Memory | None:
        def work(conn: sqlite3.Connection) -> Memory | None:
            row = conn.execute(
                f"SELECT {self._MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            return None if row is None else self._decode_memory(row)

        return self._run(work)

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
        import json

        def work(conn: sqlite3.Connection) -> Memory:
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
                    None if expires_at is None else self._utc(expires_at),
                    self._utc(now),
                    memory_id,
                ),
            )
            if cursor.rowcount == 0:
                raise StoreError(f"There is no memory {memory_id}; it may have been deleted or expired.")
            return self._get_memory(conn, memory_id)

        return self._run(work)

    def delete_memory(self, memory_id: int) -> None:
        """Delete a memory (the user asked for it).

        Raises:
            StoreError: There is no such memory, or the write failed.
        """

        def work(conn: sqlite3.Connection) -> None:
            if conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount == 0:
                raise StoreError(f"There is no memory {memory_id}; it may have been deleted or expired.")

        self._run(work)

    def expire_memories(self, now: datetime) -> int:
        """Delete every memory past its expiry at ``now`` (pinned ones never); how many went."""
        return self._run(
            lambda conn: (
                conn.execute(
                    "DELETE FROM memories WHERE pinned = 0 AND expires_at IS NOT NULL AND expires_at <= ?",
                    (self._utc(now),),
                ).rowcount
            )
        )

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
        :func:`engine.memory.select_for_prompt` makes the final choice."""

        def work(conn: sqlite3.Connection) -> list[Memory]:
            rows = conn.execute(
                f"SELECT {self._MEMORY_COLUMNS} FROM memories"
                " WHERE (pinned = 1 OR importance >= ?)"
                " AND (pinned = 1 OR expires_at IS NULL OR expires_at > ?)"
                " AND (? IS NULL OR session_id IS NULL OR session_id != ?)"
                " ORDER BY pinned DESC, created_at DESC, id DESC LIMIT ?",
                (
                    min_importance,
                    self._utc(now),
                    exclude_session,
                    exclude_session,
                    limit,
                ),
            ).fetchall()
            return [self._decode_memory(row) for row in rows]

        return self._run(work)

    def memory_through(self, session_id: int) -> int:
        """The id of the last message of the session an assessment covered (0: none yet).

        Raises:
            StoreError: There is no such session.
        """

        def work(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT memory_through FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise StoreError(f"There is no session {session_id}; it may have been deleted.")
            return int(row[0])

        return self._run(work)

    def _get_memory(self, conn: sqlite3.Connection, memory_id: int) -> Memory:
        row = conn.execute(
            f"SELECT {self._MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            raise StoreError(f"There is no memory {memory_id}.")
        return self._decode_memory(row)

    @staticmethod
    def _utc(moment: datetime) -> str:
        return moment.astimezone(UTC).isoformat(timespec="microseconds")

    @staticmethod
    def _decode_memory(row: sqlite3.Row | tuple[object, ...]) -> Memory:
        import json

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
            created_at=datetime.fromisoformat(str(row[8])),
            updated_at=datetime.fromisoformat(str(row[9])),
            expires_at=None if row[10] is None else datetime.fromisoformat(str(row[10])),
        )

    # --- end of memories ----------------------------------------------------------------------


# --- full-text search ---------------------------------------------------------------------------

# Noncharacters: never meant to appear in text, so they cannot be confused with a message's own.
_MATCH_START = "\ufdd0"
_MATCH_END = "\ufdd1"
_WORD = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")
_MAX_QUERY_PIECES = 16


def fts_query(text: str) -> str | None:
    """An FTS5 query for what a user typed: each piece a quoted phrase of its words, its last word
    a prefix (when it has two letters or more: one letter starts thousands of words, and ranking them
    all would be slow for nothing).

    Only letters and digits reach FTS5 (as the unicode61 tokenizer splits words), always inside
    double quotes, so nothing the user types is read as query syntax. None when there is no word.
    """
    phrases = []
    for piece in text.split()[:_MAX_QUERY_PIECES]:
        words = _WORD.findall(piece)
        if words:
            phrases.append('"' + " ".join(words) + ('"*' if len(words[-1]) > 1 else '"'))
    return " ".join(phrases) or None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A message that matched a search."""

    session_id: int
    session_title: str
    message_id: int
    role: Role
    created_at: datetime
    text: str
    """The part of the message around the match, on one line, ``…`` where it was cut."""
    matches: tuple[tuple[int, int], ...]
    """Where in :attr:`text` the query matched: (start, end) offsets."""
    rank: float
    """bm25: lower is better."""

    @property
    def snippet(self) -> str:
        """:attr:`text` with each match between « and »."""
        out, last = [], 0
        for start, end in self.matches:
            out += [self.text[last:start], "«", self.text[start:end], "»"]
            last = end
        out.append(self.text[last:])
        return "".join(out)


def _hit(row: sqlite3.Row | tuple[object, ...]) -> SearchHit:
    text, matches = _unmark(str(row[5]))
    return SearchHit(
        session_id=int(cast(int, row[0])),
        session_title=str(row[1]),
        message_id=int(cast(int, row[2])),
        role=cast(Role, row[3]),
        created_at=datetime.fromisoformat(str(row[4])),
        text=text,
        matches=matches,
        rank=float(cast(float, row[6])),
    )


def _unmark(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """FTS5's snippet (matches between the two noncharacters) as one line of text and match offsets."""
    text, matches = "", []
    inside = False
    for piece in re.split(f"([{_MATCH_START}{_MATCH_END}])", marked):
        if piece == _MATCH_START:
            inside = True
        elif piece == _MATCH_END:
            inside = False
        else:
            piece = _SPACE.sub(" ", piece)
            if text.endswith(" ") and piece.startswith(" "):
                piece = piece[1:]
            if inside and piece:
                matches.append((len(text), len(text) + len(piece)))
            text += piece
    return text, tuple(matches)


def _hold(path: Path) -> tuple[int | None, bool]:
    """Take a shared lock on ``<database>.lock`` for as long as the store is open.

    Returns:
        The lock file's descriptor (None where there is no flock), and whether this is the only
        Heedful process with the database open. The kernel drops the lock of a killed process, so
        after a crash the next app is alone again and finishes the replies it left streaming.
    """
    if fcntl is None:
        return None, True
    try:
        fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None, True  # a read-only directory: opening the database will say so in words
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        alone = True
    except BlockingIOError:
        alone = False
    except OSError:
        os.close(fd)
        return None, True  # a filesystem without locks: behave as before
    fcntl.flock(fd, fcntl.LOCK_SH)  # from exclusive to shared: other apps may open it too
    return fd, alone


def _create_private(path: Path) -> None:
    # Create the file ourselves so it starts 0600 whatever the umask: it holds the user's chats.
    # SQLite's -wal and -shm files copy the main file's permissions.
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)  # open's mode went through the umask, which may take the owner's bits too
    finally:
        os.close(fd)


def _check_whole_pages(conn: sqlite3.Connection, path: Path) -> None:
    """A database file is always a whole number of pages: one that is not was cut short.

    SQLite itself notices a file shorter than its header says only at a page boundary; cut mid-page,
    the last page reads as zeros and garbage rows come back. Checked before anything writes.
    """
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    size = path.stat().st_size
    if page_size > 0 and size % page_size:
        raise sqlite3.DatabaseError(
            f"database disk image is malformed: the file ends part-way through a page ({size:,} bytes)"
        )


# --- opening, with recovery from a corrupt file -----------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenedStore:
    """A store ready to use and, when the old file had to be moved aside, a sentence saying where."""

    store: SqliteChatStore
    notice: str | None = None


def _is_corrupt(err: StoreError) -> bool:
    cause = err.__cause__
    if not isinstance(cause, sqlite3.DatabaseError) or isinstance(cause, sqlite3.OperationalError):
        return False
    text = str(cause).lower()
    return "not a database" in text or "malformed" in text or "corrupt" in text


def open_store(path: Path, *, clock: Callable[[], datetime] = datetime.now) -> OpenedStore:
    """Open the database at ``path``; a corrupt file is moved aside and a fresh one started.

    Args:
        path: The database file.
        clock: Gives the timestamp in the name of a moved-aside file.

    Returns:
        The store and, when a corrupt file was moved aside, a notice naming where it went.

    Raises:
        StoreError: The database could not be opened for another reason (a newer schema, no
            permission, a full disk); nothing was moved or changed.
    """
    try:
        return OpenedStore(SqliteChatStore(path))
    except StoreError as err:
        if not _is_corrupt(err):
            raise
    aside = _free_name(path.with_name(f"{path.name}.corrupt-{clock():%Y%m%d-%H%M%S}"))
    try:
        path.rename(aside)
        aside.chmod(0o600)  # it still holds the user's chats, whatever its mode was
        for suffix in ("-wal", "-shm", "-journal"):
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                moved = companion.rename(aside.with_name(aside.name + suffix))
                moved.chmod(0o600)
    except OSError as err:
        raise StoreError(
            f"The database at {path} is damaged and could not be moved aside ({err.strerror}). "
            "Move it yourself, or set HEEDFUL_DATA_DIR to use another directory."
        ) from err
    store = SqliteChatStore(path)
    return OpenedStore(
        store,
        f"The database at {path} was damaged; it was moved to {aside} and a new, empty one was started.",
    )


def _free_name(wanted: Path) -> Path:
    """``wanted``, or ``wanted-2``, ``wanted-3``...: a moved-aside file never replaces an earlier one."""
    candidate, n = wanted, 1
    while any(candidate.with_name(candidate.name + s).exists() for s in ("", "-wal", "-shm", "-journal")):
        n += 1
        candidate = wanted.with_name(f"{wanted.name}-{n}")
    return candidate
