"""Sessions and messages in SQLite: the :class:`engine.protocols.store.ChatStore` the app runs on.

One connection per store, in autocommit mode with explicit transactions, WAL journalling and
``synchronous=NORMAL``: a committed message survives the app being killed (WAL with NORMAL can lose
the last transactions only on power loss, not on a process crash). The connection is shared by the
event loop's worker threads, so every call holds a lock.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from engine.chat import HistoryCut, MessagePage, MessageStatus, Role, Session, SessionSettings, StoredMessage
from engine.errors import StoreError

# The curation's records (curation_records, analysis_records, summary_records) are imported by
# the methods that use them: the first frame reads messages only (tests/test_first_paint.py).
from sessions import db_file, message_records, search_records, session_rows
from sessions.memory_methods import MemoryMethods
from sessions.migrations import check_version, migrate
from sessions.paths import ensure_private_dir
from sessions.recall_records import RecallMethods
from sessions.search_records import SearchHit as SearchHit  # re-exported: callers import it from here
from sessions.search_records import fts_query as fts_query
from sessions.session_stamps import SessionStamps

if TYPE_CHECKING:
    # The curation's records: the first frame reads messages only (see tests/test_first_paint.py).
    from engine.advice.calls import CallUsage
    from engine.curation.consent import ConsentChoice
    from engine.curation.ledger import LedgerEntry
    from engine.entities.registry import EntityRecord
    from engine.protocols.store import CurationSnapshot, ItemRecord
    from engine.summaries.model import StoredSummary
    from engine.text.analysis import Analysis
    from sessions.exchange import SessionDump
    from sessions.importing import Progress, SessionFile, Stored

INTERRUPTED_BY_EXIT = "Heedful closed before this reply finished."

_T = TypeVar("_T")


def _now() -> str:
    return message_records.now_text()


class SqliteChatStore(MemoryMethods, RecallMethods):
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
        self._stamps = SessionStamps()
        self._trashed: list[int] = []
        """Sessions this store hid with :meth:`trash_session`, the latest last; deleted when it closes."""
        """The open lock file that tells other Heedful processes this database is in use."""
        in_memory = str(path) == ":memory:"
        alone = True
        try:
            if not in_memory:
                ensure_private_dir(path.parent)
                db_file.create_private(path)
                self._holder, alone = db_file.hold(path)
            # check_same_thread=False: calls come from asyncio.to_thread workers; the lock serializes them.
            self._conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=5.0
            )
        except OSError as err:
            where = f" ({err.filename})" if err.filename and str(err.filename) != str(path) else ""
            raise StoreError(f"Could not open the database at {path}: {err.strerror or err}{where}.") from err
        except sqlite3.Error as err:
            raise StoreError(db_file.describe(err, self._where)) from err
        try:
            self._conn.execute("PRAGMA busy_timeout = 5000")
            # Before anything writes: switching to WAL rewrites the header of a file we must not touch.
            check_version(self._conn, self._where)
            if not in_memory:
                db_file.check_whole_pages(self._conn, path)
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
            raise StoreError(db_file.describe(err, self._where)) from err

    # --- plumbing ----------------------------------------------------------------------------

    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` in one transaction under the lock; map sqlite errors to StoreError."""
        with self._lock:
            try:
                with self._transaction():
                    return work(self._conn)
            except sqlite3.Error as err:
                raise StoreError(db_file.describe(err, self._where)) from err
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
            return session_rows.get_session(conn, cast(int, cursor.lastrowid))

        return self._run(work)

    def get_session(self, session_id: int) -> Session | None:
        return self._run(lambda conn: session_rows.find_session(conn, session_id))

    def latest_session(self) -> Session | None:
        def work(conn: sqlite3.Connection) -> Session | None:
            row = conn.execute(
                f"SELECT {session_rows.SESSION_COLUMNS} FROM sessions s WHERE s.deleted_at IS NULL"
                " ORDER BY s.updated_at DESC, s.id DESC LIMIT 1"
            ).fetchone()
            return None if row is None else session_rows.decode_session(row)

        return self._run(work)

    def list_sessions(self) -> list[Session]:
        def work(conn: sqlite3.Connection) -> list[Session]:
            rows = conn.execute(
                f"SELECT {session_rows.SESSION_COLUMNS} FROM sessions s WHERE s.deleted_at IS NULL"
                " ORDER BY s.updated_at DESC, s.id DESC"
            ).fetchall()
            return [session_rows.decode_session(row) for row in rows]

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
            return session_rows.get_session(conn, session_id)

        return self._run(work)

    def delete_session(self, session_id: int) -> None:
        self._run(lambda conn: conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)))

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
            self._stamps.before_write(conn, session_id)
            added = message_records.add(conn, session_id, role, content, status, tokens=tokens, model=model)
            self._stamps.after_write(conn, session_id)
            return added

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
            owner = conn.execute("SELECT session_id FROM messages WHERE id = ?", (message_id,)).fetchone()
            if owner is not None:
                self._stamps.before_write(conn, int(owner[0]))
            updated = message_records.update(
                conn, message_id, content=content, status=status, tokens=tokens, error=error
            )
            self._stamps.after_write(conn, updated.session_id)
            return updated

        return self._run(work)

    def changed_elsewhere(self, session_id: int) -> bool:
        return self._run(lambda conn: self._stamps.changed_elsewhere(conn, session_id))

    def messages(self, session_id: int) -> list[StoredMessage]:
        return self._run(lambda conn: message_records.of_session(conn, session_id))

    def messages_after(self, session_id: int, message_id: int, *, limit: int) -> list[StoredMessage]:
        return self._run(lambda conn: message_records.after(conn, session_id, message_id, limit))

    def message_text(self, message_id: int) -> str:
        return self._run(lambda conn: message_records.text(conn, message_id))

    def message_page(
        self, session_id: int, *, before: int | None = None, after: int | None = None, limit: int
    ) -> MessagePage:
        """Up to ``limit`` of the session's shown messages: the latest before message ``before``
        (the latest of all when both are None), or the earliest after message ``after``."""

        def work(conn: sqlite3.Connection) -> MessagePage:
            self._stamps.seen(conn, session_id)
            return message_records.page(conn, session_id, before=before, after=after, limit=limit)

        return self._run(work)

    # --- curation -------------------------------------------------------------------------------

    def history_cut(self, session_id: int, keep: int) -> HistoryCut | None:
        return self._run(lambda conn: message_records.cut(conn, session_id, keep))

    def load_curation(self, session_id: int, *, after: int = 0) -> CurationSnapshot:
        from sessions import curation_records

        return self._run(lambda conn: curation_records.load(conn, session_id, after=after))

    def load_analyses(
        self, session_id: int, version: int, *, after: int = 0, upto: int | None = None
    ) -> Mapping[int, Analysis]:
        from sessions import analysis_records

        return self._run(lambda conn: analysis_records.load(conn, session_id, version, after, upto))

    def save_analyses(self, version: int, analyses: Sequence[tuple[int, Analysis]]) -> None:
        from sessions import analysis_records

        if analyses:
            self._run(lambda conn: analysis_records.save(conn, version, analyses))

    def add_curation_calls(self, session_id: int, usage: CallUsage) -> None:
        from sessions import curation_records

        self._run(lambda conn: curation_records.add_calls(conn, session_id, usage))

    def curation_calls(self, session_id: int) -> CallUsage:
        from sessions import curation_records

        return self._run(lambda conn: curation_records.read_calls(conn, session_id))

    def load_summaries(self, session_id: int) -> list[StoredSummary]:
        from sessions import summary_records

        return self._run(lambda conn: summary_records.load(conn, session_id))

    def save_summary(self, summary: StoredSummary) -> None:
        from sessions import summary_records

        self._run(lambda conn: summary_records.save(conn, summary))

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
        from sessions import curation_records

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
        from sessions import curation_records

        return self._run(lambda conn: curation_records.read_ledger(conn, session_id, target))

    def saved_tokens(self, session_id: int) -> int:
        """The tokens the session's requests saved against sending everything verbatim."""
        from sessions import curation_records

        return self._run(lambda conn: curation_records.saved_tokens(conn, session_id))

    # --- search and trash (see sessions.search_records) -----------------------------------------

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
        return self._run(lambda conn: search_records.search(conn, match, limit))

    def trash_session(self, session_id: int) -> Session:
        """Hide a session as if deleted, until :meth:`restore_session` or until this store closes.

        Raises:
            StoreError: There is no such session.
        """
        # self._trashed is only used under the lock, as here.
        return self._run(lambda conn: search_records.trash(conn, self._trashed, session_id, now=_now()))

    def restore_session(self, session_id: int) -> Session:
        """Undo :meth:`trash_session`.

        Raises:
            StoreError: The session is gone (its store closed, or it was never trashed here).
        """
        return self._run(lambda conn: search_records.restore(conn, self._trashed, session_id))

    def trashed_sessions(self) -> list[Session]:
        """The sessions this store trashed that can still be restored, the latest first."""
        return self._run(lambda conn: search_records.trashed_sessions(conn, self._trashed))

    def purge_trash(self) -> None:
        """Delete for real the sessions this store trashed."""
        self._run(lambda conn: search_records.purge(conn, self._trashed))

    # --- export and import (issue 6; see sessions.exchange) -------------------------------------

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

    def import_session(self, source: SessionFile, *, progress: Progress | None = None) -> Stored:
        """Store the transcript ``source`` as a new session, in one transaction, streaming it from
        its file (:func:`sessions.importing.store`).

        Raises:
            TranscriptError: A line of the file is bad (nothing is stored).
        """
        from sessions import importing

        return self._run(lambda conn: importing.store(conn, source, now=datetime.now(UTC), progress=progress))

    # --- app state ---------------------------------------------------------------------------

    def session_settings(self, session_id: int) -> SessionSettings:
        return self._run(lambda conn: message_records.session_settings(conn, session_id))

    def update_session_settings(self, session_id: int, settings: SessionSettings) -> None:
        self._run(lambda conn: message_records.update_session_settings(conn, session_id, settings))

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

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file now, while nothing waits for the store.

        SQLite does it by itself in the commit that takes the log past 1,000 pages, inside some
        turn's planning. Called once a turn has settled, it leaves the next turn a log it can start
        again from the top. A failure is left for SQLite's own checkpoint to meet, and report, in a
        later write.
        """
        with self._lock, suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

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


# --- opening, with recovery from a corrupt file -----------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenedStore:
    """A store ready to use and, when the old file had to be moved aside, a sentence saying where."""

    store: SqliteChatStore
    notice: str | None = None


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
        if not db_file.is_corrupt(err):
            raise
    aside = db_file.free_name(path.with_name(f"{path.name}.corrupt-{clock():%Y%m%d-%H%M%S}"))
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
