"""Which sessions' curations the app keeps built: a few, not every long session it has shown."""

from __future__ import annotations

from engine.context_service import ContextService
from engine.session_curations import KEPT_CURATIONS, SessionCurations
from engine.tokens import LazyTokenCounter, load_counter
from sessions.store import SqliteChatStore

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


def _sessions(store: SqliteChatStore, count: int) -> list[int]:
    ids = []
    for n in range(count):
        session = store.create_session(f"session {n}")
        for m in range(4):
            role = "user" if m % 2 == 0 else "assistant"
            text = f"Session {n}, message {m}: the harbour crane {n * 10 + m} stalled."
            store.add_message(session.id, role, text, tokens=COUNTER.count(text))
        ids.append(session.id)
    return ids


async def test_sessions_looked_at_earlier_are_let_go_and_come_back_as_they_were(
    store: SqliteChatStore,
) -> None:
    curations = SessionCurations(store, COUNTER, window=lambda: 100_000, system_prompt="")
    first, *others = _sessions(store, KEPT_CURATIONS + 1)
    pinned = curations.get(first).items[0].id
    await ContextService(curations).pin(first, pinned)

    for session_id in others:  # the user opens one session after another
        curations.get(session_id)
    assert curations.cached(first) is None  # its memory is given back
    assert all(curations.cached(s) is not None for s in others)

    again = curations.get(first)  # opened again: rebuilt from the store, the pin with it
    assert again.by_id[pinned].pinned
    assert [i.id for i in again.items] == [m.id for m in store.messages(first)]
    assert curations.cached(others[0]) is None


def test_switching_between_two_sessions_rebuilds_neither(store: SqliteChatStore) -> None:
    curations = SessionCurations(store, COUNTER, window=lambda: 100_000, system_prompt="")
    one, two = _sessions(store, 2)
    built = curations.get(one), curations.get(two)
    for _ in range(3):
        assert curations.get(one) is built[0] and curations.get(two) is built[1]
