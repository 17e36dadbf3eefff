"""A session's curation is used by one thread at a time, without callers having a lock to remember:
a user's pin never lands in the middle of a turn's planning, and a held curation is not let go."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from engine.chat import Role
from engine.curation.context_service import ContextService
from engine.curation.session_curations import SessionCurations
from engine.text.tokens import LazyTokenCounter, load_counter
from sessions.store import SqliteChatStore

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
BLOCKED = 0.5
"""How long a call that must wait is given to (wrongly) finish: it takes a few milliseconds."""


def _session(store: SqliteChatStore) -> int:
    session = store.create_session("crane")
    for m in range(6):
        role: Role = "user" if m % 2 == 0 else "assistant"
        text = f"Message {m}: the harbour crane {m} stalled again."
        store.add_message(session.id, role, text, tokens=COUNTER.count(text))
    return session.id


def _in_thread(call: Callable[[], object]) -> tuple[threading.Event, threading.Event, list[BaseException]]:
    """Run ``call`` in a thread; events set when it starts and when it has returned."""
    started, finished, failed = threading.Event(), threading.Event(), []

    def run() -> None:
        started.set()
        try:
            call()
        except BaseException as err:  # handed to the test
            failed.append(err)
        finally:
            finished.set()

    threading.Thread(target=run, daemon=True).start()
    return started, finished, failed


def test_a_pin_waits_for_the_turn_planning_the_session_and_lands_after_it(store: SqliteChatStore) -> None:
    session_id = _session(store)
    curations = SessionCurations(store, COUNTER, window=lambda: 4_000, system_prompt="")
    context = ContextService(curations)
    with curations.held(session_id) as held:  # as a turn's planning holds it
        curation = held.curation
        first = curation.items[0].id
        started, finished, failed = _in_thread(lambda: asyncio.run(context.pin(session_id, first)))
        assert started.wait(5)
        assert not finished.wait(BLOCKED)  # the user's pin waits for the plan
        new = curation.last_user()
        assert new is not None
        result = curation.plan(new)
        assert not curation.by_id[first].pinned  # not pinned halfway through the plan
        held.save(curation.apply(result))
    assert finished.wait(10) and not failed
    with curations.held(session_id) as held:
        assert held.curation.by_id[first].pinned  # it landed, after the turn
    assert store.load_curation(session_id).items[first].pinned  # and is stored


def test_a_held_curation_is_not_let_go_under_its_holder(store: SqliteChatStore) -> None:
    session_id = _session(store)
    curations = SessionCurations(store, COUNTER, window=lambda: 4_000, system_prompt="")
    with curations.held(session_id) as held:
        curation = held.curation
        started, finished, failed = _in_thread(lambda: curations.evict(session_id))
        assert started.wait(5)
        assert not finished.wait(BLOCKED)
        assert held.cached is curation
    assert finished.wait(10) and not failed
    with curations.held(session_id) as held:
        assert held.cached is None


def test_a_held_session_refuses_to_be_used_after_its_block(store: SqliteChatStore) -> None:
    session_id = _session(store)
    curations = SessionCurations(store, COUNTER, window=lambda: 4_000, system_prompt="")
    with curations.held(session_id) as held:
        assert held.curation.items
    with pytest.raises(RuntimeError, match="after its with-block"):
        held.curation  # noqa: B018 - the access is what is tested
