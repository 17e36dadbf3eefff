"""One SQLite connection shared by the app's worker threads, and the transaction every store
operation runs in. The base of each part of :class:`sessions.store.SqliteChatStore`.

Autocommit mode with explicit transactions, WAL journalling and ``synchronous=NORMAL``: a committed
message survives the app being killed (WAL with NORMAL can lose the last transactions only on
power loss, not on a process crash).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from engine.chat import MessageStatus
from engine.errors import StoreError
from sessions import db_file
from sessions.migrations import check_version, migrate
from sessions.paths import ensure_private_dir
from sessions.rows import now_text, select, value

INTERRUPTED_BY_EXIT = "Heedful closed before this reply finished."
Built = TypeVar("Built")


class Database:
    """The open database file: its connection, the lock every call holds, and the lock file that
    tells other Heedful processes it is in use."""

    def __init__(self, path: Path) -> None:
        """Open (creating if needed) and migrate the database at ``path``; ``:memory:`` works too.

        Raises:
            StoreError: The file is not a database, is newer than this code, or cannot be opened.
        """
        self._where = str(path)
        self._lock = threading.Lock()
        self._holder: int | None = None
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
                mode = value(self._conn, "PRAGMA journal_mode = WAL")
                if str(mode).lower() != "wal":
                    raise sqlite3.OperationalError(f"could not switch to WAL journalling (got {mode})")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            migrate(self._conn)
            if alone:
                # Only when no other Heedful has the database open: another app's "streaming"
                # reply is being written right now, not abandoned.
                with self._begun():
                    self._finish_abandoned()
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as err:
            self.close()
            raise StoreError(db_file.describe(err, self._where)) from err

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection, in one transaction under the lock; sqlite errors come out as StoreError."""
        with self._lock:
            try:
                with self._begun():
                    yield self._conn
            except sqlite3.Error as err:
                raise StoreError(db_file.describe(err, self._where)) from err
            except ValueError as err:
                # A row that does not decode (a status, a date, a JSON column) was damaged on disk.
                raise StoreError(
                    f"The database at {self._where} is damaged: a stored row could not be read ({err})."
                ) from err

    def _read(
        self, build: Callable[[sqlite3.Row], Built], sql: str, params: tuple[object, ...] = ()
    ) -> list[Built]:
        """``build`` of each row ``sql`` gives, in one transaction: a row that does not decode is
        reported as damage, as :meth:`_transaction` says."""
        with self._transaction() as conn:
            return [build(row) for row in select(conn, sql, params)]

    @contextmanager
    def _begun(self) -> Iterator[None]:
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

    def _finish_abandoned(self) -> None:
        # A reply still "streaming" when the store opens was cut off by the app exiting or being
        # killed: keep its text and say what happened.
        self._conn.execute(
            "UPDATE messages SET status = ?, error = COALESCE(error, ?), updated_at = ? WHERE status = ?",
            (MessageStatus.INTERRUPTED, INTERRUPTED_BY_EXIT, now_text(), MessageStatus.STREAMING),
        )
        # Sessions deleted in an app that was killed before it could delete them for real.
        self._conn.execute("DELETE FROM sessions WHERE deleted_at IS NOT NULL")

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
            rows = select(self._conn, "PRAGMA integrity_check")
        return [str(row["integrity_check"]) for row in rows if row["integrity_check"] != "ok"]

    def close(self) -> None:
        """Close the database and release the lock file."""
        with self._lock:
            self._conn.close()
            if self._holder is not None:
                os.close(self._holder)  # releases the lock
                self._holder = None
