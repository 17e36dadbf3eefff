"""Stored message analyses: a reopened session is not read again, and a stale reading is never used."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.curation import stored
from engine.curation.context_building import build_view
from engine.curation.ledger import EntryKind
from engine.curation.result import CurationDelta
from engine.curation.session_curation import SessionCuration
from engine.curation.session_curations import SessionCurations
from engine.text.analysis import ANALYSIS_VERSION, analyse_text
from engine.text.tokens import LazyTokenCounter, load_counter
from sessions import analysis_codec
from sessions.store import SqliteChatStore
from tests.held import curation_of

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
CONVERSATION = [
    ("user", "The deploy fails with ConnectionRefusedError in src/db/pool.py:42 since Monday."),
    ("assistant", "Check DATABASE_URL in config.toml; the pool retries 3 times on port 5432."),
    ("user", "My sister Maya loves lentil soup; she visits on 14 May 2026."),
    ("assistant", "Boil the lentils for 20 minutes. See https://example.com/lentils for more."),
    ("user", "Back to the deploy: is src/db/pool.py:42 still the problem?"),
]


def _session(store: SqliteChatStore) -> int:
    session = store.create_session("deploy")
    for role, text in CONVERSATION:
        store.add_message(session.id, role, text, tokens=COUNTER.count(text))  # type: ignore[arg-type]
    return session.id


def _curations(store: SqliteChatStore) -> SessionCurations:
    return SessionCurations(store, COUNTER, window=lambda: 4_000, system_prompt="")


def _planned(curation: SessionCuration) -> object:
    new = curation.last_user()
    assert new is not None
    return build_view(curation, curation.plan(new), new_id=new.id)


def test_a_session_opened_again_reads_its_stored_analyses_and_plans_the_same(store: SqliteChatStore) -> None:
    session_id = _session(store)
    first = curation_of(_curations(store), session_id)  # reads every message, and stores what it read
    stored = store.load_analyses(session_id, ANALYSIS_VERSION)
    assert len(stored) == len(CONVERSATION)
    for message in store.messages(session_id):
        assert stored[message.id] == analyse_text(message.content)

    again = curation_of(_curations(store), session_id)  # as after a restart
    assert again.take_unstored() == []  # nothing was read again
    assert [(i.mentions, i.memory_role) for i in again.items] == [
        (i.mentions, i.memory_role) for i in first.items
    ]
    assert _planned(again) == _planned(first)


def test_an_analysis_goes_when_its_message_text_changes(store: SqliteChatStore) -> None:
    session_id = _session(store)
    curation_of(_curations(store), session_id)
    message = store.messages(session_id)[1]
    store.update_message(message.id, content="Now it is about the violin in the orchard.")
    assert message.id not in store.load_analyses(session_id, ANALYSIS_VERSION)
    store.update_message(message.id, status=message.status)  # other changes keep the others
    assert len(store.load_analyses(session_id, ANALYSIS_VERSION)) == len(CONVERSATION) - 1

    curation = curation_of(_curations(store), session_id)
    refs = curation.by_id[message.id].refs
    assert not any("config.toml" in ref for ref in refs)  # the new text was read, not the old


def test_unreadable_or_older_analyses_are_read_again_from_the_text(
    store: SqliteChatStore, db_path: Path
) -> None:
    session_id = _session(store)
    curation_of(_curations(store), session_id)
    first, second = (m.id for m in store.messages(session_id)[:2])
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE message_analyses SET analysis = '{not json' WHERE message_id = ?", (first,))
        conn.execute("UPDATE message_analyses SET version = 0 WHERE message_id = ?", (second,))
    stale = store.load_analyses(session_id, ANALYSIS_VERSION)
    assert first not in stale and second not in stale
    terms = store.load_terms(session_id, ANALYSIS_VERSION)  # what the story reads before a cut
    assert terms.get(first) is None and terms.get(second) is None
    curation = curation_of(_curations(store), session_id)
    assert any(ref.startswith("error:") for ref in curation.by_id[first].refs)
    stored = store.load_analyses(session_id, ANALYSIS_VERSION)  # and stored again, readable
    assert stored[first] == analyse_text(CONVERSATION[0][1])
    assert stored[second] == analyse_text(CONVERSATION[1][1])
    assert store.load_terms(session_id, ANALYSIS_VERSION)[first] == stored[first].terms


def test_messages_added_during_a_session_have_their_analyses_stored_with_the_next_save(
    store: SqliteChatStore,
) -> None:
    from engine.curation.stored import save

    session_id = _session(store)
    curations = _curations(store)
    curation = curation_of(curations, session_id)
    text = "What port does the pool use again?"
    message = store.add_message(session_id, "user", text, tokens=COUNTER.count(text))
    new = curation.add_message(message.id, "user", text, message.tokens or 0)
    save(store, session_id, curation, curation.apply(curation.plan(new)))
    assert store.load_analyses(session_id, ANALYSIS_VERSION)[message.id] == analyse_text(text)


def test_a_session_is_rebuilt_a_part_at_a_time_with_every_message_and_its_analysis(
    store: SqliteChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stored, "REBUILD_PAGE", 2)  # 5 messages: parts of 2, 2 and 1
    session_id = _session(store)
    first = curation_of(_curations(store), session_id)
    again = curation_of(_curations(store), session_id)
    assert [i.id for i in again.items] == [m.id for m in store.messages(session_id)]
    assert again.take_unstored() == []  # each message's analysis was found with its part
    assert _planned(again) == _planned(first)


@pytest.mark.parametrize(
    "row",
    [
        '{"m": [["planet", "Mars", "planet:mars"]], "t": {}, "r": "context"}',  # a kind this version lacks
        '{"m": [], "t": {}, "r": "villain"}',  # a memory role it lacks
        '{"m": [[["path"], "a", "b"]], "t": {}, "r": "context"}',  # not even a string
        '{"m": [], "t": [], "r": "context"}',
    ],
)
def test_a_stored_analysis_this_version_cannot_read_is_made_again(row: str) -> None:
    assert analysis_codec.decode(row) is None


def _turn(
    store: SqliteChatStore, curation: SessionCuration, session_id: int, text: str
) -> tuple[set[str], CurationDelta]:
    """Send ``text`` through ``curation`` and save the plan, as a turn does: its message's entity
    refs, and the delta it saved."""
    from engine.curation.stored import save

    message = store.add_message(session_id, "user", text, tokens=COUNTER.count(text))
    new = curation.add_message(message.id, "user", text, message.tokens or 0)
    delta = curation.apply(curation.plan(new))
    save(store, session_id, curation, delta)
    return {m.ref for m in new.mentions}, delta


def test_the_first_turn_after_reopening_saves_only_the_entities_it_changed(store: SqliteChatStore) -> None:
    # Rebuilding re-derives every entity from the messages; the store already holds them as they
    # are. Saving them all again took 85 ms of a 10,000-message session's first turn.
    session_id = _session(store)
    _turn(store, curation_of(_curations(store), session_id), session_id, "What port does the pool use?")
    again = curation_of(_curations(store), session_id)  # as after a restart
    everything = set(again.registry.records)
    mentioned, delta = _turn(store, again, session_id, "And Maya's soup: lentils again?")
    changed = {entry.target for entry in delta.ledger if entry.kind is EntryKind.ENTITY}
    assert set(delta.entities) <= mentioned | changed
    assert set(delta.entities) < everything
    stored = {e.ref: e for e in store.load_entities(session_id, everything)}
    assert stored == {ref: record for ref, record in again.registry.records.items()}


def test_a_reply_analysed_with_its_thinking_before_is_analysed_again_without(store: SqliteChatStore) -> None:
    """Earlier versions read a reasoning model's thinking as part of its reply: its entities
    (here a file and an error only thought about) are not the conversation's."""
    session = store.create_session("pool")
    store.add_message(session.id, "user", "How big should the pool be?", tokens=7)
    content = "<think>\nMaybe src/db/pool.py raises ConnectionRefusedError.\n</think>\n\nUse 20 connections."
    reply = store.add_message(session.id, "assistant", content, tokens=COUNTER.count(content))
    store.save_analyses(2, [(reply.id, analyse_text(content))])  # as version 2 stored it
    curation = curation_of(_curations(store), session.id)
    assert not curation.by_id[reply.id].refs
    assert "path:src/db/pool.py" not in curation.registry.records
    assert store.load_analyses(session.id, ANALYSIS_VERSION)[reply.id] == analyse_text("Use 20 connections.")


def test_analyses_stored_by_the_previous_extractor_are_read_again(store: SqliteChatStore) -> None:
    """A database written before sentence-opening words stopped being names shows no such name."""
    from engine.curation.items import MemoryRole
    from engine.entities.mentions import EntityKind, Mention
    from engine.text.analysis import Analysis, term_counts

    session = store.create_session("echo")
    text = "Echo back the exact command you ran, please."
    message = store.add_message(session.id, "user", text, tokens=COUNTER.count(text))
    old = Analysis((Mention(EntityKind.NAME, "Echo", "name:echo"),), term_counts(text), MemoryRole.CONTEXT)
    store.save_analyses(3, [(message.id, old)])  # what the extractor of version 3 stored

    curation = curation_of(_curations(store), session.id)
    assert "name:echo" not in curation.by_id[message.id].refs
    assert "name:echo" not in curation.registry.records


def test_analyses_read_by_id_are_the_sessions_own_however_many_are_asked(store: SqliteChatStore) -> None:
    """Cold recall reads the analyses of the messages it found by their ids, in one go."""
    session_id, other = _session(store), _session(store)
    for session in (session_id, other):
        curation_of(_curations(store), session)
    ids = [m.id for m in store.messages(session_id)]
    unknown = list(range(10**6, 10**6 + 600))  # more than one query's worth of ids
    found = store.analyses_of(
        session_id, ANALYSIS_VERSION, unknown + ids + [m.id for m in store.messages(other)]
    )
    assert sorted(found) == ids
    assert [found[i] for i in ids] == [analyse_text(text) for _, text in CONVERSATION]
