"""Sessions and messages in SQLite: the :class:`engine.protocols.store.ChatStore` (and
:class:`engine.protocols.memory.MemoryStore`) the app runs on, and opening it with recovery from a
corrupt file.

The store is one class made of parts, one per group of tables, each a :class:`sessions.database.Database`
whose methods hold their own SQL: sessions (:mod:`sessions.session_records`), messages
(:mod:`sessions.message_records`), recall, curation, analyses, summaries, the story's model lines,
message vectors, memories, search and trash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import StoreError
from sessions import db_file
from sessions.analysis_records import AnalysisRecords
from sessions.curation_records import CurationRecords
from sessions.database import INTERRUPTED_BY_EXIT as INTERRUPTED_BY_EXIT  # re-exported
from sessions.embedding_records import EmbeddingRecords
from sessions.keep_rule_records import KeepRuleRecords
from sessions.memory_records import MemoryRecords
from sessions.message_records import MessageRecords
from sessions.recall_records import RecallRecords
from sessions.search_records import SearchHit as SearchHit  # re-exported: callers import it from here
from sessions.search_records import SearchRecords
from sessions.search_records import fts_query as fts_query
from sessions.session_records import SessionRecords, no_session
from sessions.standing_records import StandingRecords
from sessions.story_line_records import StoryLineRecords
from sessions.summary_records import SummaryRecords

if TYPE_CHECKING:
    from sessions.exchange import SessionDump
    from sessions.importing import Progress, SessionFile, Stored


class SqliteChatStore(
    SessionRecords,
    MessageRecords,
    RecallRecords,
    CurationRecords,
    KeepRuleRecords,
    StandingRecords,
    AnalysisRecords,
    SummaryRecords,
    StoryLineRecords,
    EmbeddingRecords,
    MemoryRecords,
    SearchRecords,
):
    """Sessions, messages and app state in one SQLite file.

    Every method commits before it returns and raises :class:`StoreError` (with a sentence for the
    user) instead of ``sqlite3.Error``. The connection is shared by the event loop's worker threads,
    so every call holds a lock.
    """

    def dump_session(self, session_id: int) -> SessionDump:
        """Everything about a session, for export (:mod:`sessions.exchange`).

        Raises:
            StoreError: There is no such session.
        """
        from sessions import exchange

        with self._transaction() as conn:
            found = exchange.dump(conn, session_id)
        if found is None:
            raise no_session(session_id)
        return found

    def import_session(self, source: SessionFile, *, progress: Progress | None = None) -> Stored:
        """Store the transcript ``source`` as a new session, in one transaction, streaming it from
        its file (:func:`sessions.importing.store`).

        Raises:
            TranscriptError: A line of the file is bad (nothing is stored).
        """
        from sessions import importing

        with self._transaction() as conn:
            return importing.store(conn, source, now=datetime.now(UTC), progress=progress)


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
