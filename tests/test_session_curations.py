"""Which sessions' curations the app keeps built: a few, not every long session it has shown."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.chat import MessageStatus, Role, StoredMessage
from engine.curation.context_service import ContextService
from engine.curation.items import Item
from engine.curation.session_curation import SessionCuration
from engine.curation.session_curations import KEPT_CURATIONS, SessionCurations
from engine.curation.stored import save
from engine.entities.registry import EntityState
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.events import ReplyCompleted, ReplyTextArrived
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.held import cached_curation, curation_of

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


def _sessions(store: SqliteChatStore, count: int) -> list[int]:
    ids = []
    for n in range(count):
        session = store.create_session(f"session {n}")
        for m in range(4):
            role: Role = "user" if m % 2 == 0 else "assistant"
            text = f"Session {n}, message {m}: the harbour crane {n * 10 + m} stalled."
            store.add_message(session.id, role, text, tokens=COUNTER.count(text))
        ids.append(session.id)
    return ids


async def test_sessions_looked_at_earlier_are_let_go_and_come_back_as_they_were(
    store: SqliteChatStore,
) -> None:
    curations = SessionCurations(store, COUNTER, window=lambda: 100_000, system_prompt="")
    first, *others = _sessions(store, KEPT_CURATIONS + 1)
    pinned = curation_of(curations, first).items[0].id
    await ContextService(curations).pin(first, pinned)

    for session_id in others:  # the user opens one session after another
        curation_of(curations, session_id)
    assert cached_curation(curations, first) is None  # its memory is given back
    assert all(cached_curation(curations, s) is not None for s in others)

    again = curation_of(curations, first)  # opened again: rebuilt from the store, the pin with it
    assert again.by_id[pinned].pinned
    assert [i.id for i in again.items] == [m.id for m in store.messages(first)]
    assert cached_curation(curations, others[0]) is None


def test_switching_between_two_sessions_rebuilds_neither(store: SqliteChatStore) -> None:
    curations = SessionCurations(store, COUNTER, window=lambda: 100_000, system_prompt="")
    one, two = _sessions(store, 2)
    built = curation_of(curations, one), curation_of(curations, two)
    for _ in range(3):
        assert curation_of(curations, one) is built[0] and curation_of(curations, two) is built[1]


@pytest.fixture
async def turns(store: SqliteChatStore, fake_server: FakeOpenAIServer) -> AsyncIterator[TurnService]:
    model = OpenAIChatModel(
        model="fake-model", base_url=fake_server.base_url, api_key="k", context_window=8192, read_timeout=5.0
    )
    yield TurnService(store, model, COUNTER, system_prompt="", flush_interval=0.05)
    await model.aclose()  # closed whether the test passed or not


def _conversation(curation: SessionCuration) -> list[int]:
    return [item.id for item in curation.items]


async def test_a_session_let_go_while_its_reply_streams_has_the_reply_once(
    store: SqliteChatStore, fake_server: FakeOpenAIServer, turns: TurnService
) -> None:
    fake_server.reply = "word " * 40
    fake_server.chunk_delay = 0.01
    others = _sessions(store, KEPT_CURATIONS)
    session_id = None
    async for event in turns.send(None, "the crane stalled again"):
        if isinstance(event, ReplyTextArrived) and session_id is None:
            session_id = store.list_sessions()[0].id
            for other in others:  # the user looks at other sessions meanwhile
                await turns.preview(other)
            assert cached_curation(turns.curations, session_id) is None
            await turns.preview(session_id)  # and comes back while the reply is still coming
    assert session_id is not None
    stored = [m.id for m in store.messages(session_id)]
    assert _conversation(curation_of(turns.curations, session_id)) == stored


async def test_a_session_rebuilt_just_as_its_reply_is_stored_takes_the_reply_once(
    store: SqliteChatStore, fake_server: FakeOpenAIServer, turns: TurnService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker opens the session between the reply's last write and its curation taking
    it: the rebuilt curation read the reply from the store already."""
    fake_server.reply = "All done."
    update = store.update_message

    def update_then_reopen(message_id: int, **changes: object) -> StoredMessage:
        stored = update(message_id, **changes)  # type: ignore[arg-type]
        if stored.status == MessageStatus.COMPLETE:
            with turns.curations.held(stored.session_id) as held:
                held.evict()
                assert held.curation is not None
        return stored

    monkeypatch.setattr(store, "update_message", update_then_reopen)
    events = [event async for event in turns.send(None, "is the crane fixed?")]
    assert isinstance(events[-1], ReplyCompleted)
    (session,) = store.list_sessions()
    assert _conversation(curation_of(turns.curations, session.id)) == [
        m.id for m in store.messages(session.id)
    ]


def _turn(
    curations: SessionCurations, store: SqliteChatStore, session_id: int, text: str, reply: str
) -> None:
    """What a turn does to the curation, without a model: store the message, plan, apply, save,
    and take in a reply."""
    user = store.add_message(session_id, "user", text, tokens=COUNTER.count(text))
    curations.take(session_id, user)
    curation = curation_of(curations, session_id)
    new = curation.last_user()
    assert new is not None and new.id == user.id
    save(store, session_id, curation, curation.apply(curation.plan(new)))
    curations.take(session_id, store.add_message(session_id, "assistant", reply, tokens=COUNTER.count(reply)))


def taken_by_both(
    session: int, user: StoredMessage, *both: SessionCurations
) -> list[tuple[SessionCuration, Item]]:
    """The user's new message taken by each of ``both`` (the session's curations as it stayed
    open and as reopened): each curation with the message to plan for."""
    found = []
    for curations in both:
        curations.take(session, user)
        curation = curation_of(curations, session)
        new = curation.last_user()
        assert new is not None and new.id == user.id
        found.append((curation, new))
    return found


def test_a_reopened_session_judges_its_entities_as_if_it_had_stayed_open(store: SqliteChatStore) -> None:
    """Entities pruned for their last mention are not re-examined on reopening (a long session's
    are nearly all so); one mentioned again in a message stored without its turn (the app quit in
    between) is: its stored reason names an older turn."""
    session = store.create_session("entities").id
    live = SessionCurations(store, COUNTER, window=lambda: 700, system_prompt="")
    for n in range(12):
        reply = f"The deploy of src/service_{n}.py failed with Error{n}Failure again. " + "Details. " * 20
        _turn(live, store, session, f"Step {n}: and now?", reply)
    early, other = "path:src/service_0.py", "path:src/service_1.py"
    assert curation_of(live, session).registry.records[early].state is EntityState.PRUNED
    # Too long to be sent: only the mention itself can bring src/service_0.py back.
    text = "Also src/service_0.py is back. " + "Filler words. " * 300
    stray = store.add_message(session, "assistant", text, tokens=COUNTER.count(text))
    live.take(session, stray)

    reopened = SessionCurations(store, COUNTER, window=lambda: 700, system_prompt="")
    text = "What about the build?"
    user = store.add_message(session, "user", text, tokens=COUNTER.count(text))
    plans = [curation.plan(new) for curation, new in taken_by_both(session, user, live, reopened)]
    assert plans[0].entities == plans[1].entities
    assert plans[1].entities[early][0].value == "active"  # mentioned again, in the last turn
    assert plans[1].entities[other] == (EntityState.PRUNED, "not mentioned since turn 2, not in the prompt")


TOPICS = (
    "the greenhouse tomatoes, their seedlings, compost and watering",
    "the refund on the invoice, the receipt and what the accountant said",
    "the marathon training plan, its mileage, stretching and new sneakers",
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topics=st.lists(st.integers(0, len(TOPICS) - 1), min_size=6, max_size=24))
def test_a_reopened_session_tells_the_story_it_told_while_open(tmp_path: Path, topics: list[int]) -> None:
    """The story so far is read again from the store as it was grown turn by turn: the same topics,
    and the same lines in the next request (stored model lines name segments by their ids)."""
    store = SqliteChatStore(tmp_path / f"story-{uuid.uuid4().hex}.db")
    try:
        session = store.create_session("topics").id
        live = SessionCurations(store, COUNTER, window=lambda: 1500, system_prompt="")
        for n, topic in enumerate(topics):
            about = TOPICS[topic]
            reply = f"On {about}: step {n} goes first, then the rest. " + f"More on {about}. " * 6
            _turn(live, store, session, f"Tell me about {about} ({n}).", reply)
        reopened = SessionCurations(store, COUNTER, window=lambda: 1500, system_prompt="")
        text = f"And {TOPICS[topics[0]]} again?"
        user = store.add_message(session, "user", text, tokens=COUNTER.count(text))
        told = [
            (
                [[f.item_id for f in s.fragments] for s in curation.state.story.segments],
                curation.plan(new).story,
            )
            for curation, new in taken_by_both(session, user, live, reopened)
        ]
        assert told[0] == told[1]
        assert len(told[0][0]) > 1  # the conversation changed topic: the check compared segments
    finally:
        store.close()
