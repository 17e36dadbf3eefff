"""A long session's summarized and pruned messages are not held in memory: their texts are read
from the store when they are needed again, word for word."""

from __future__ import annotations

from pathlib import Path

from engine.chat import Role
from engine.curation.items import ItemState
from engine.curation.session_curations import SessionCurations
from engine.curation.stored import save
from engine.protocols.store import ItemRecord
from engine.text.tokens import LazyTokenCounter, load_counter
from sessions.store import SqliteChatStore
from tests.held import curation_of

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


def _session(store: SqliteChatStore, count: int) -> list[int]:
    session = store.create_session("long")
    ids = []
    for n in range(count):
        role: Role = "user" if n % 2 == 0 else "assistant"
        text = f"Message {n} about the harbour crane number {n}. " * 20
        ids.append(store.add_message(session.id, role, text, tokens=COUNTER.count(text)).id)
    return ids


def _curations(store: SqliteChatStore, window: int = 100_000) -> SessionCurations:
    return SessionCurations(store, COUNTER, window=lambda: window, system_prompt="")


def test_older_messages_are_read_back_from_the_store_when_restored(store: SqliteChatStore) -> None:
    ids = _session(store, 12)
    session_id = store.latest_session().id  # type: ignore[union-attr]
    older = ids[:6]
    store.save_curation(
        session_id,
        items=[
            ItemRecord(i, ItemState.SUMMARIZED if n % 2 else ItemState.PRUNED, summary=f"summary of {i}")
            for n, i in enumerate(older)
        ],
        entities=[],
        ledger=[],
    )
    curation = curation_of(_curations(store), session_id)
    assert [i.held_text is None for i in curation.items] == [True] * 6 + [False] * 6

    stored = {m.id: m.content for m in store.messages(session_id)}
    assert all(item.text == stored[item.id] for item in curation.items)
    curation.restore(older[2])  # the user brings a pruned message back: sent word for word
    new = curation.last_user()
    assert new is not None
    sent = [m.content for m in curation.plan(new).messages if m.form == "verbatim"]
    assert stored[older[2]] in sent


def test_messages_demoted_in_a_turn_let_go_of_their_texts(store: SqliteChatStore) -> None:
    _session(store, 12)
    session_id = store.latest_session().id  # type: ignore[union-attr]
    curations = _curations(store, window=2_000)  # room for a few of the messages only
    curation = curation_of(curations, session_id)
    new = curation.last_user()
    assert new is not None
    result = curation.plan(new)
    save(store, session_id, curation, curation.apply(result))

    demoted = [i for i in curation.items if i.state is not ItemState.ACTIVE]
    assert demoted, "the window was meant to leave some messages out"
    assert all(i.held_text is None for i in demoted)
    assert all(i.held_text is not None for i in curation.items if i.state is ItemState.ACTIVE)
    # Their texts are still there for what needs them (a model summary, the inspector).
    stored = {m.id: m.content for m in store.messages(session_id)}
    assert [i.text for i in demoted] == [stored[i.id] for i in demoted]


class CountingStore(SqliteChatStore):
    reads = 0

    def message_text(self, message_id: int) -> str:
        self.reads += 1
        return super().message_text(message_id)


def test_recalled_messages_are_read_once_not_on_every_turn(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "heedful.db")
    session_id = store.create_session("deploy").id
    texts = [
        ("user", "The deploy fails with ConnectionRefusedError in src/db/pool.py:42."),
        ("assistant", "Check DATABASE_URL in config.toml; the pool retries on port 5432."),
        ("user", "My sister Maya loves lentil soup."),
        ("assistant", "Boil the lentils for 20 minutes."),
        ("user", "Back to the deploy: is src/db/pool.py:42 still the problem?"),
    ]
    for role, text in texts:
        store.add_message(session_id, role, text, tokens=COUNTER.count(text))  # type: ignore[arg-type]
    pruned = [m.id for m in store.messages(session_id)[:2]]
    records = [ItemRecord(i, ItemState.PRUNED) for i in pruned]
    store.save_curation(session_id, items=records, entities=[], ledger=[])
    curation = curation_of(_curations(store), session_id)
    new = curation.last_user()
    assert new is not None
    first = curation.plan(new)
    recalled = {s for m in first.messages if m.form == "verbatim" for s in m.sources} & set(pruned)
    assert recalled, "the new message names src/db/pool.py, as the pruned ones do"
    assert store.reads == len(recalled)
    save(store, session_id, curation, curation.apply(first))
    for _ in range(3):  # the next turns' plans, and the previews between them
        again = curation.plan(new)
        assert {s for m in again.messages if m.form == "verbatim" for s in m.sources} >= recalled
    assert store.reads == len(recalled)
    store.close()
