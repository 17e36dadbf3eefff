"""The SQLite store: durability, ordering, recovery from damage, and refusing what it cannot read."""

from __future__ import annotations

import sqlite3
import stat
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest

from engine.chat import MessageStatus
from engine.errors import StoreError
from sessions.migrations import SCHEMA_VERSION
from sessions.store import INTERRUPTED_BY_EXIT, SqliteChatStore, open_store


def test_a_new_database_is_private_and_journals_with_wal(store: SqliteChatStore, db_path: Path) -> None:
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def test_messages_come_back_in_order_and_survive_reopening(store: SqliteChatStore, db_path: Path) -> None:
    session = store.create_session("Soup")
    store.add_message(session.id, "user", "How long do I boil lentils?")
    store.add_message(session.id, "assistant", "About 20 minutes.", model="m", tokens=5)
    store.close()

    with closing(SqliteChatStore(db_path)) as again:
        messages = again.messages(session.id)
        assert [(m.role, m.content) for m in messages] == [
            ("user", "How long do I boil lentils?"),
            ("assistant", "About 20 minutes."),
        ]
        assert messages[1].model == "m"
        assert messages[1].tokens == 5
        assert again.get_session(session.id) == again.latest_session()


def test_a_history_is_read_a_part_at_a_time_and_no_further_than_asked(store: SqliteChatStore) -> None:
    session = store.create_session("long")
    ids = [store.add_message(session.id, "user", f"message {n}").id for n in range(10)]
    assert [m.id for m in store.messages_after(session.id, ids[2], limit=100, upto=ids[5])] == ids[3:6]
    assert [m.id for m in store.messages_after(session.id, ids[2], limit=2, upto=ids[5])] == ids[3:5]
    assert [m.id for m in store.messages_after(session.id, ids[2], limit=100)] == ids[3:]


def test_latest_session_is_the_one_last_written_to(store: SqliteChatStore) -> None:
    first = store.create_session("first")
    second = store.create_session("second")
    assert store.latest_session() == store.get_session(second.id)
    store.add_message(first.id, "user", "back to the first")
    latest = store.latest_session()
    assert latest is not None
    assert latest.id == first.id
    assert [s.id for s in store.list_sessions()] == [first.id, second.id]


def test_message_count_leaves_out_superseded_replies(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    store.add_message(session.id, "user", "q")
    old = store.add_message(session.id, "assistant", "", status=MessageStatus.FAILED)
    store.update_message(old.id, status=MessageStatus.SUPERSEDED)
    store.add_message(session.id, "assistant", "a")
    found = store.get_session(session.id)
    assert found is not None
    assert found.message_count == 2


def test_update_changes_only_the_fields_given(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    reply = store.add_message(session.id, "assistant", "par", status=MessageStatus.STREAMING, model="m")
    updated = store.update_message(reply.id, content="partial")
    assert (updated.content, updated.status, updated.model) == ("partial", MessageStatus.STREAMING, "m")
    done = store.update_message(reply.id, status=MessageStatus.INTERRUPTED, error="cut")
    assert (done.content, done.status, done.error) == ("partial", MessageStatus.INTERRUPTED, "cut")


def test_updating_or_adding_to_something_missing_is_a_store_error(store: SqliteChatStore) -> None:
    with pytest.raises(StoreError):
        store.update_message(999, content="x")
    with pytest.raises(StoreError):
        store.add_message(999, "user", "x")


def test_rename_trims_and_refuses_an_empty_title(store: SqliteChatStore) -> None:
    session = store.create_session("old")
    assert store.rename_session(session.id, "  new title  ").title == "new title"
    with pytest.raises(ValueError, match="empty"):
        store.rename_session(session.id, "   ")


def test_deleting_a_session_deletes_its_messages(store: SqliteChatStore, db_path: Path) -> None:
    keep = store.create_session("keep")
    store.add_message(keep.id, "user", "stays")
    gone = store.create_session("gone")
    store.add_message(gone.id, "user", "goes")
    store.delete_session(gone.id)
    assert store.get_session(gone.id) is None
    assert store.messages(gone.id) == []
    assert [m.content for m in store.messages(keep.id)] == ["stays"]
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_reply_left_streaming_is_marked_interrupted_with_its_text_on_the_next_open(
    store: SqliteChatStore, db_path: Path
) -> None:
    session = store.create_session("s")
    reply = store.add_message(session.id, "assistant", "half a rep", status=MessageStatus.STREAMING)
    store.close()  # as if the app had been killed mid-stream

    with closing(SqliteChatStore(db_path)) as again:
        (found,) = again.messages(session.id)
        assert found.id == reply.id
        assert found.status is MessageStatus.INTERRUPTED
        assert found.content == "half a rep"
        assert found.error == INTERRUPTED_BY_EXIT


def test_a_reply_another_open_store_is_writing_is_left_streaming(
    store: SqliteChatStore, db_path: Path
) -> None:
    session = store.create_session("s")
    reply = store.add_message(session.id, "assistant", "still com", status=MessageStatus.STREAMING)
    # Another app (or `heedful replay`) opens the same database.
    with closing(SqliteChatStore(db_path)) as second:
        (found,) = second.messages(session.id)
        assert found.status is MessageStatus.STREAMING  # not abandoned: its writer is alive
    store.close()  # now nobody holds it: the next open finishes the reply
    with closing(SqliteChatStore(db_path)) as third:
        assert third.messages(session.id)[0].status is MessageStatus.INTERRUPTED
        assert third.messages(session.id)[0].id == reply.id


def test_a_checkpoint_copies_the_write_ahead_log_into_the_database_file(
    store: SqliteChatStore, db_path: Path
) -> None:
    session = store.create_session("Notes")
    store.add_message(session.id, "user", "harbour log line " * 10_000)  # 170 kB, in the log
    before = db_path.stat().st_size
    store.checkpoint()
    assert db_path.stat().st_size >= before + 170_000
    assert store.messages(session.id)[0].content.startswith("harbour log line")


def test_app_state_round_trips_and_overwrites(store: SqliteChatStore) -> None:
    assert store.get_state("theme") is None
    store.set_state("theme", "heedful-dark")
    store.set_state("theme", "heedful-light")
    assert store.get_state("theme") == "heedful-light"


def test_text_is_stored_exactly_even_with_nul_and_escape_bytes(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    text = "a\x00b\x1b]52;c;aGk=\x07 ünïcødé \U0001f600"
    message = store.add_message(session.id, "user", text)
    assert store.messages(session.id)[0].content == text == message.content


def test_a_garbage_file_is_moved_aside_and_a_fresh_database_started(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not sqlite at all\x00" * 200)
    opened = open_store(db_path, clock=lambda: datetime(2026, 1, 2, 3, 4, 5))
    try:
        aside = db_path.with_name("heedful.db.corrupt-20260102-030405")
        assert aside.read_bytes().startswith(b"this is not sqlite")
        assert opened.notice is not None
        assert str(aside) in opened.notice
        assert opened.store.list_sessions() == []
        assert opened.store.integrity_problems() == []
    finally:
        opened.store.close()


def test_a_database_from_a_newer_heedful_is_refused_and_left_untouched(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(StoreError, match="newer version of Heedful"):
        open_store(db_path)
    assert db_path.read_bytes() == before
    assert list(db_path.parent.glob("*.corrupt-*")) == []


def test_a_data_directory_that_cannot_be_created_is_a_store_error_in_words(tmp_path: Path) -> None:
    in_the_way = tmp_path / "data"
    in_the_way.write_text("a file where the data directory should be")
    with pytest.raises(StoreError, match=str(in_the_way)):
        open_store(in_the_way / "heedful.db")
    assert in_the_way.read_text() == "a file where the data directory should be"


def test_two_stores_on_one_file_see_each_others_commits(db_path: Path) -> None:
    one = SqliteChatStore(db_path)
    two = SqliteChatStore(db_path)
    try:
        session = one.create_session("shared")
        two.add_message(session.id, "user", "from two")
        one.add_message(session.id, "user", "from one")
        assert [m.content for m in two.messages(session.id)] == ["from two", "from one"]
        assert one.integrity_problems() == []
    finally:
        one.close()
        two.close()


def test_a_version_3_database_is_migrated_and_its_old_messages_are_searchable(db_path: Path) -> None:
    from sessions.migrations import MIGRATIONS, SCHEMA_VERSION

    db_path.parent.mkdir(parents=True)
    old = sqlite3.connect(db_path, isolation_level=None)
    for version, migration in enumerate(MIGRATIONS[:3], start=1):
        for statement in migration:
            old.execute(statement)
        old.execute(f"PRAGMA user_version = {version}")
    when = "2026-01-01T00:00:00+00:00"
    old.execute("INSERT INTO sessions (title, created_at, updated_at) VALUES ('s', ?, ?)", (when, when))
    old.execute(
        "INSERT INTO messages (session_id, role, content, status, created_at, updated_at)"
        " VALUES (1, 'user', 'the flux capacitor failed', 'complete', ?, ?)",
        (when, when),
    )
    old.close()

    store = open_store(db_path).store
    try:
        conn = sqlite3.connect(db_path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        hits = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?"
        assert conn.execute(hits, ("capacitor",)).fetchall() == [(1,)]  # backfilled
        session = store.get_session(1)
        assert session is not None
        added = store.add_message(session.id, "user", "a quantum widget")
        assert conn.execute(hits, ("quantum",)).fetchall() == [(added.id,)]  # kept in step
        store.update_message(added.id, content="a classical widget")
        assert conn.execute(hits, ("quantum",)).fetchall() == []
        assert conn.execute(hits, ("classical",)).fetchall() == [(added.id,)]
        conn.close()
    finally:
        store.close()


def test_a_model_summary_is_kept_across_reopening_until_its_message_changes(
    store: SqliteChatStore, db_path: Path
) -> None:
    # Model summaries cost tokens: kept across runs, but never used for text they were not written from.
    from engine.summaries.model import StoredSummary, SummaryLevel, source_hash

    session = store.create_session("s")
    reply = store.add_message(session.id, "assistant", "We decided on PostgreSQL 16 for the cluster.")
    other = store.add_message(session.id, "assistant", "The deploy runs from deploy.sh at 02:00.")
    hashed = source_hash(reply.content)
    summary = StoredSummary(reply.id, SummaryLevel.DETAILED, hashed, "PostgreSQL 16.", "m")
    store.save_summary(summary)
    # Written from text the message no longer has (it changed while the model wrote): not kept.
    store.save_summary(StoredSummary(other.id, SummaryLevel.DETAILED, source_hash("old text"), "x y z", "m"))
    store.close()

    reopened = open_store(db_path).store
    try:
        assert reopened.load_summaries(session.id) == [summary]
        reopened.update_message(reply.id, content="We decided on PostgreSQL 17 after all.")
        assert reopened.load_summaries(session.id) == []
    finally:
        reopened.close()
