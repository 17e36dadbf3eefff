"""The store's search across sessions (FTS5) and its undoable delete (schema v6 ``deleted_at``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.chat import MessageStatus
from engine.errors import StoreError
from sessions.store import SqliteChatStore, fts_query


def test_search_finds_messages_in_every_session_best_first(store: SqliteChatStore) -> None:
    deploy = store.create_session("deploy")
    cats = store.create_session("cats")
    once = store.add_message(deploy.id, "user", "The flux capacitor failed during the deploy of billing-api.")
    often = store.add_message(
        cats.id, "assistant", "Flux, flux and more flux: the capacitor needs a flux check."
    )
    store.add_message(cats.id, "user", "Biscuit needs her vaccine.")

    hits = store.search("flux")
    assert [(h.message_id, h.session_id, h.session_title, h.role) for h in hits] == [
        (often.id, cats.id, "cats", "assistant"),  # bm25: more occurrences, ranked first
        (once.id, deploy.id, "deploy", "user"),
    ]
    assert hits[0].rank <= hits[1].rank
    assert hits[1].snippet == "The «flux» capacitor failed during the deploy of billing-api."
    assert hits[1].text[slice(*hits[1].matches[0])] == "flux"
    assert hits[1].created_at == once.created_at


def test_search_matches_word_starts_phrases_and_ignores_accents(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    path = store.add_message(session.id, "user", "It fails in auth.py:42 when the café closes.")
    store.add_message(session.id, "user", "py 42 auth: the same words in another order")
    assert [h.message_id for h in store.search("auth.py:42")] == [path.id]  # a phrase, in order
    assert [h.message_id for h in store.search("cafe clos")] == [path.id]  # accents, word starts
    assert store.search("café closes nowhere") == []  # every piece must match
    assert store.search("c") == [] and [h.message_id for h in store.search("ca")] == [path.id]
    assert fts_query("auth.py:4") == '"auth py 4"' and fts_query("auth.py:42") == '"auth py 42"*'


def test_search_marks_matches_in_plain_characters_on_one_line(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    store.add_message(session.id, "user", "first line\n\n  [bold]markup[/bold] and the needle\there\r\nend")
    (hit,) = store.search("needle")
    assert "\n" not in hit.text and "\t" not in hit.text
    assert hit.snippet == "first line [bold]markup[/bold] and the «needle» here end"


def test_search_cuts_long_messages_around_the_match(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    store.add_message(session.id, "user", "filler " * 500 + "needle " + "filler " * 500)
    (hit,) = store.search("needle")
    assert len(hit.text) < 200 and hit.text.startswith("…") and hit.text.endswith("…")
    assert "«needle»" in hit.snippet


def test_search_leaves_out_superseded_replies_and_deleted_sessions(store: SqliteChatStore) -> None:
    kept = store.create_session("kept")
    gone = store.create_session("gone")
    reply = store.add_message(kept.id, "assistant", "an old needle")
    store.update_message(reply.id, status=MessageStatus.SUPERSEDED)
    current = store.add_message(kept.id, "assistant", "a new needle")
    store.add_message(gone.id, "user", "a needle in the trash")
    store.trash_session(gone.id)
    assert [h.message_id for h in store.search("needle")] == [current.id]


@pytest.mark.parametrize(
    "query",
    [
        '"foo',  # an unbalanced quote
        "AND",  # an operator alone
        "foo OR",
        "NEAR(a b",
        "*",
        "-x",
        "^start",
        "content:foo",  # a column filter
        "{content}: foo",
        'fo"o" * bar',
        "((((",
        "",
        "   ",
        "🐈",
    ],
)
def test_any_query_text_is_safe(store: SqliteChatStore, query: str) -> None:
    session = store.create_session("s")
    store.add_message(session.id, "user", "foo and bar, AND content: the start of x")
    store.search(query)  # must not raise


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_text_makes_a_valid_fts_query(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES ('some text to match')")
    match = fts_query(query)
    if match is not None:
        conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


def test_a_query_without_words_finds_nothing(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    store.add_message(session.id, "user", "anything")
    assert store.search('"" * ()') == [] and fts_query("-- !!") is None
    assert store.search("anything", limit=0) == []


# --- trash: delete with undo ------------------------------------------------------------------------


def test_a_trashed_session_is_hidden_everywhere_until_restored(store: SqliteChatStore) -> None:
    kept = store.create_session("kept")
    store.add_message(kept.id, "user", "keep")
    gone = store.create_session("gone")
    store.add_message(gone.id, "user", "a message")

    assert store.trash_session(gone.id).title == "gone"
    assert [s.id for s in store.list_sessions()] == [kept.id]
    assert store.latest_session() is not None and store.latest_session().id == kept.id  # type: ignore[union-attr]
    assert store.get_session(gone.id) is None
    assert [s.id for s in store.trashed_sessions()] == [gone.id]
    with pytest.raises(StoreError, match="no session"):
        store.add_message(gone.id, "user", "into the trash")

    restored = store.restore_session(gone.id)
    assert (restored.id, restored.message_count) == (gone.id, 1)
    assert {s.id for s in store.list_sessions()} == {kept.id, gone.id}
    assert store.trashed_sessions() == []
    assert [m.content for m in store.messages(gone.id)] == ["a message"]


def test_undo_brings_back_the_latest_delete_first(store: SqliteChatStore) -> None:
    first, second = store.create_session("first"), store.create_session("second")
    store.trash_session(first.id)
    store.trash_session(second.id)
    assert [s.id for s in store.trashed_sessions()] == [second.id, first.id]


def test_trashed_sessions_are_deleted_for_real_when_the_store_closes(db_path: Path) -> None:
    store = SqliteChatStore(db_path)
    gone = store.create_session("gone")
    store.add_message(gone.id, "user", "secret words")
    store.trash_session(gone.id)
    store.close()
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0
        assert (
            conn.execute("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'secret'").fetchone()[0]
            == 0
        )
    finally:
        conn.close()


def test_a_restore_after_close_or_of_an_untrashed_session_is_refused(store: SqliteChatStore) -> None:
    session = store.create_session("s")
    with pytest.raises(StoreError, match="deleted for good"):
        store.restore_session(session.id)


def test_a_killed_apps_trash_is_emptied_by_the_next_store_that_is_alone(db_path: Path) -> None:
    store = SqliteChatStore(db_path)
    gone = store.create_session("gone")
    store.trash_session(gone.id)
    # Killed: it never closes. Another app that opens the database meanwhile must leave it alone
    # (the first app could still undo)...
    other = SqliteChatStore(db_path)
    with other._lock:
        assert other._conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    other.close()
    # ...and once the killed app's lock is gone, the next store deletes it.
    store._trashed.clear()  # as a killed process would: no purge on the way out
    store.close()
    after = SqliteChatStore(db_path)
    try:
        with after._lock:
            assert after._conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
    finally:
        after.close()
