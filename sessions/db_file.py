"""The database file itself: creating it private, sharing it between Heedful processes, telling
a cut-short file, putting SQLite's errors into words, and naming a damaged file moved aside.

Used by :mod:`sessions.store` when it opens a database and whenever a call fails.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

from engine.errors import StoreError
from sessions.rows import value

if sys.platform != "win32":
    import fcntl
else:  # pragma: no cover - no flock on Windows: every open finishes abandoned replies
    fcntl = None


def describe(err: sqlite3.Error, where: str) -> str:
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


def hold(path: Path) -> tuple[int | None, bool]:
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


def create_private(path: Path) -> None:
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


def check_whole_pages(conn: sqlite3.Connection, path: Path) -> None:
    """A database file is always a whole number of pages: one that is not was cut short.

    SQLite itself notices a file shorter than its header says only at a page boundary; cut mid-page,
    the last page reads as zeros and garbage rows come back. Checked before anything writes.
    """
    page_size = int(value(conn, "PRAGMA page_size"))
    size = path.stat().st_size
    if page_size > 0 and size % page_size:
        raise sqlite3.DatabaseError(
            f"database disk image is malformed: the file ends part-way through a page ({size:,} bytes)"
        )


def is_corrupt(err: StoreError) -> bool:
    cause = err.__cause__
    if not isinstance(cause, sqlite3.DatabaseError) or isinstance(cause, sqlite3.OperationalError):
        return False
    text = str(cause).lower()
    return "not a database" in text or "malformed" in text or "corrupt" in text


def free_name(wanted: Path) -> Path:
    """``wanted``, or ``wanted-2``, ``wanted-3``...: a moved-aside file never replaces an earlier one."""
    candidate, n = wanted, 1
    while any(candidate.with_name(candidate.name + s).exists() for s in ("", "-wal", "-shm", "-journal")):
        n += 1
        candidate = wanted.with_name(f"{wanted.name}-{n}")
    return candidate
