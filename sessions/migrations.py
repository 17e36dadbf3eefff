"""The database schema, as an ordered list of migrations keyed by ``PRAGMA user_version``.

Migration ``n`` (1-based) takes a database at version ``n - 1`` to version ``n``. Each one runs in
its own transaction together with the version bump, so a crash leaves the database at the version
before or after it, never in between. Append new migrations; never edit a released one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from engine.chat import ROLES, MessageStatus
from engine.errors import StoreError
from sessions.rows import value

Migration = tuple[str, ...]
"""The SQL statements of one migration, run in order in one transaction."""


def _sql_list(values: Sequence[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


_V1_INITIAL: Migration = (
    """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
    f"""
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ({_sql_list(ROLES)})),
            content TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ({_sql_list([s.value for s in MessageStatus])})),
            tokens INTEGER,
            model TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
    "CREATE INDEX messages_by_session ON messages (session_id, id)",
    # latest_session() and list_sessions() sort on this.
    "CREATE INDEX sessions_by_update ON sessions (updated_at, id)",
    "CREATE TABLE app_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


_V2_CURATION: Migration = (
    # One row per message the engine has decided something about; a message without a row is
    # active, unpinned and unsummarized.
    """
        CREATE TABLE item_state (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
            state TEXT NOT NULL CHECK (state IN ('active', 'summarized', 'pruned')),
            pinned INTEGER NOT NULL DEFAULT 0,
            kept_by_user INTEGER NOT NULL DEFAULT 0,
            summary TEXT
        )
        """,
    """
        CREATE TABLE entities (
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            ref TEXT NOT NULL,
            kind TEXT NOT NULL,
            label TEXT NOT NULL,
            turns TEXT NOT NULL,
            state TEXT,
            reason TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (session_id, ref)
        )
        """,
    """
        CREATE TABLE ledger (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn INTEGER NOT NULL,
            kind TEXT NOT NULL,
            target TEXT NOT NULL,
            action TEXT NOT NULL,
            reason TEXT NOT NULL,
            scores TEXT NOT NULL,
            before TEXT,
            after TEXT,
            requires_consent INTEGER NOT NULL,
            reversible INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )
        """,
    "CREATE INDEX ledger_by_target ON ledger (session_id, target, id)",
    """
        CREATE TABLE session_curation (
            session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            consent_policy TEXT
        )
        """,
)


_V3_CONTEXT_ACTIONS: Migration = (
    # Tokens curation has saved over the session's turns, for the panel's "saved in this session".
    "ALTER TABLE session_curation ADD COLUMN saved_tokens INTEGER NOT NULL DEFAULT 0",
    # Messages the user told Heedful to forget: not recalled until they restore them.
    "ALTER TABLE item_state ADD COLUMN forgotten INTEGER NOT NULL DEFAULT 0",
)


_V4_SEARCH_AND_SETTINGS: Migration = (
    # Full-text search over every message (external content: the text is stored once, in
    # messages; triggers keep the index in step).
    """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        )
        """,
    """
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END
        """,
    """
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        END
        """,
    """
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END
        """,
    "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
    # Per-session settings; NULL means "as the config says".
    "ALTER TABLE sessions ADD COLUMN system_prompt TEXT",
    "ALTER TABLE sessions ADD COLUMN model TEXT",
    "ALTER TABLE sessions ADD COLUMN profile TEXT",
    "ALTER TABLE sessions ADD COLUMN temperature REAL",
)


_V5_MEMORIES: Migration = (
    # Cross-session memory: what an assessment of a session kept, with graduated expiry.
    """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
            summary TEXT NOT NULL,
            importance REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
            tags TEXT NOT NULL DEFAULT '[]',
            topics TEXT NOT NULL DEFAULT '[]',
            reasoning TEXT NOT NULL DEFAULT '',
            pinned INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            expires_at TEXT
        )
        """,
    "CREATE INDEX memories_by_importance ON memories (importance, created_at)",
    # The last message of the session an assessment has covered (0: none yet).
    "ALTER TABLE sessions ADD COLUMN memory_through INTEGER NOT NULL DEFAULT 0",
)


_V6_TRASH_AND_TRANSCRIPT_IDS: Migration = (
    # A session deleted in the app is hidden (deleted_at set) so the delete can be undone while
    # the app runs; it is deleted for real when that store closes, or at the next open of the
    # database by a store that has it to itself.
    "ALTER TABLE sessions ADD COLUMN deleted_at TEXT",
    # The id a message had in the transcript it was imported from; an export writes it back, so
    # export then import then export gives the same ids.
    "ALTER TABLE messages ADD COLUMN transcript_id TEXT",
)


_V7_MESSAGE_ANALYSES: Migration = (
    # What the curation engine read in each message (entities, terms, role), so that opening a long
    # session does not analyse its whole history again. A row goes when its message's text changes.
    """
        CREATE TABLE message_analyses (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            analysis TEXT NOT NULL
        )
        """,
    """
        CREATE TRIGGER message_analyses_stale AFTER UPDATE OF content ON messages
        WHEN NEW.content IS NOT OLD.content
        BEGIN
            DELETE FROM message_analyses WHERE message_id = NEW.id;
        END
        """,
)


_V8_SHOWN_MESSAGE_COUNTS: Migration = (
    # A session's message count (shown in every Session) is read on each turn: without an index
    # holding the status, counting read every row of the session.
    "CREATE INDEX messages_shown ON messages (session_id, status, id)",
)


_V9_MESSAGE_SUMMARIES: Migration = (
    # Summaries a model wrote (they cost tokens: kept across runs). A row is valid for the text
    # it was written from (source_hash); it goes when its message's text changes.
    """
        CREATE TABLE message_summaries (
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            level TEXT NOT NULL CHECK (level IN ('brief', 'detailed')),
            source_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            PRIMARY KEY (message_id, level)
        )
        """,
    """
        CREATE TRIGGER message_summaries_stale AFTER UPDATE OF content ON messages
        WHEN NEW.content IS NOT OLD.content
        BEGIN
            DELETE FROM message_summaries WHERE message_id = NEW.id;
        END
        """,
)


_V10_CURATION_CALLS: Migration = tuple(
    # What curation's own model calls have cost in a session, shown beside the tokens it saved
    # (which are kept too): both survive a restart.
    f"ALTER TABLE session_curation ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"
    for column in ("calls_prompt_tokens", "calls_completion_tokens", "calls")
)


_V11_MESSAGE_VECTORS: Migration = (
    # Each message's vector from an embedding model (a provider's endpoint costs a request per
    # text: kept across runs), as little-endian float32 bytes. A row is valid for the text it was
    # made from (text_hash, checked on reading); a newer one from the same model replaces it.
    """
        CREATE TABLE message_vectors (
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (message_id, model)
        ) WITHOUT ROWID
        """,
)


_V12_KEEP_RULES: Migration = (
    # What the user said must survive ("/keep ..."), per session: its items matching a rule are
    # retained with the rule as the reason (engine.curation.keep_rules).
    """
    CREATE TABLE keep_rules (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX keep_rules_session ON keep_rules (session_id, id)",
)


_V13_STANDING_EDITS: Migration = (
    # The user's changes to a session's standing instructions (engine.standing.book): one
    # recognised in message_id edited (text) or removed (text NULL), or one added by hand
    # (message_id NULL, placed after message "after").
    """
    CREATE TABLE standing_edits (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        message_id INTEGER,
        original TEXT,
        text TEXT,
        after INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX standing_edits_session ON standing_edits (session_id, id)",
)


_V14_STORY_LINES: Migration = (
    # The story so far's lines a model wrote, one per closed topic segment (its first and last
    # message and the model): reopening a session does not ask for them again. ``sources`` are
    # the message ids the model was given (comma-separated); ``source_hash`` identifies the text
    # it was given, checked on reading.
    """
    CREATE TABLE story_lines (
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        first_id INTEGER NOT NULL,
        last_id INTEGER NOT NULL,
        model TEXT NOT NULL,
        sources TEXT NOT NULL,
        source_hash TEXT NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (session_id, first_id, last_id, model)
    )
    """,
)


_V15_PINNED_INDEX: Migration = (
    # The messages a user pinned before a long session's curated cut, found without reading the
    # session's history (engine.curation.stored): the index holds the pinned rows alone.
    "CREATE INDEX item_state_pinned ON item_state (message_id) WHERE pinned = 1",
)

_V16_STANDING_SCANS: Migration = (
    # How far a long session's user messages were read for standing instructions, by which version
    # of the recogniser, and which of them state one (comma-separated ids): reopening reads the rest.
    """
    CREATE TABLE standing_scans (
        session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        upto INTEGER NOT NULL,
        said TEXT NOT NULL
    )
    """,
)

MIGRATIONS: tuple[Migration, ...] = (
    _V1_INITIAL,
    _V2_CURATION,
    _V3_CONTEXT_ACTIONS,
    _V4_SEARCH_AND_SETTINGS,
    _V5_MEMORIES,
    _V6_TRASH_AND_TRANSCRIPT_IDS,
    _V7_MESSAGE_ANALYSES,
    _V8_SHOWN_MESSAGE_COUNTS,
    _V9_MESSAGE_SUMMARIES,
    _V10_CURATION_CALLS,
    _V11_MESSAGE_VECTORS,
    _V12_KEEP_RULES,
    _V13_STANDING_EDITS,
    _V14_STORY_LINES,
    _V15_PINNED_INDEX,
    _V16_STANDING_SCANS,
)
"""Every migration in order; ``len(MIGRATIONS)`` is the schema version this code writes."""

SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's ``PRAGMA user_version`` (0 for a new database)."""
    return int(value(conn, "PRAGMA user_version"))


def check_version(conn: sqlite3.Connection, where: str) -> None:
    """Refuse a database written by a newer Heedful, before anything writes to it.

    Raises:
        StoreError: The database's schema is newer than :data:`SCHEMA_VERSION`.
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"The database at {where} was written by a newer version of Heedful (schema version "
            f"{found}; this version knows up to {SCHEMA_VERSION}). It was left untouched: update "
            "Heedful, or set HEEDFUL_DATA_DIR to use another directory."
        )


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database up to :data:`SCHEMA_VERSION`.

    ``conn`` must be in autocommit mode (``isolation_level=None``) so transactions are explicit.

    Raises:
        StoreError: The database is newer than this code.
        sqlite3.Error: A migration failed; its transaction was rolled back.
    """
    while True:
        # BEGIN IMMEDIATE takes the write lock before reading the version, so two processes
        # opening a new database at once cannot both run the same migration.
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(conn)
            if version >= SCHEMA_VERSION:
                conn.execute("ROLLBACK")
                return
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            # PRAGMA doesn't take parameters; version is an int we computed.
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
