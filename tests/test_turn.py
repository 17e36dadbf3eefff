"""The turn pipeline, without a terminal: real SQLite store, real openai client, loopback fake server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.chat import MessageStatus
from engine.errors import ModelErrorKind
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.conversation_tail import TAIL_PAGE, NothingToRetry
from engine.turn.events import (
    ContextCurated,
    ReplyCompleted,
    ReplyFailed,
    ReplyStarted,
    ReplyTextArrived,
    TurnEvent,
    UserMessageSaved,
)
from engine.turn.retrying import RetryPolicy
from engine.turn.service import TurnService
from providers.offline import OfflineModel
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore, open_store
from tests.fake_openai import FakeOpenAIServer
from tests.kept_clients import kept

pytestmark = pytest.mark.usefixtures("models_closed")

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


def remote(server: FakeOpenAIServer, *, read_timeout: float = 5.0, window: int = 8192) -> OpenAIChatModel:
    model = OpenAIChatModel(
        model="fake-model",
        base_url=server.base_url,
        api_key="test-key",
        context_window=window,
        read_timeout=read_timeout,
        connect_timeout=2.0,
    )
    return kept(model)


def service(
    store: SqliteChatStore, model: OpenAIChatModel | OfflineModel, *, retries: int = 0
) -> TurnService:
    return TurnService(
        store,
        model,
        COUNTER,
        system_prompt="You are terse.",
        flush_interval=0.05,
        retry_policy=RetryPolicy(retries=retries),
        view_delay=0,  # every turn shows its plan, however quick the reply (test_turn_plan_view)
    )


async def wait_until(predicate: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def collect(events: object) -> list[TurnEvent]:
    return [event async for event in events]  # type: ignore[attr-defined]


async def after_one_turn(store: SqliteChatStore, fake_server: FakeOpenAIServer) -> tuple[TurnService, int]:
    """A turn service on the fake server, after a first turn in a new session (the server's window
    is asked once, then); the session's id."""
    turns = service(store, remote(fake_server))
    await collect(turns.send(None, "first"))
    session = store.latest_session()
    assert session is not None
    return turns, session.id


async def test_offline_turn_stores_both_messages_in_order(store: SqliteChatStore) -> None:
    turns = service(store, OfflineModel(COUNTER, word_delay=0))
    events = await collect(turns.send(None, "hello"))
    assert isinstance(events[0], UserMessageSaved)
    # The engine curates the request before it is sent; the panel is told what it decided once
    # the reply has its place on screen (and once only).
    assert isinstance(events[1], ReplyStarted)
    curated = [e for e in events if isinstance(e, ContextCurated)]
    assert len(curated) == 1 and not curated[0].view.upcoming  # this turn's own plan
    assert any(isinstance(e, ReplyTextArrived) for e in events)
    assert isinstance(events[-1], ReplyCompleted)
    session = events[0].session
    assert session.title == "hello"
    user, reply = store.messages(session.id)
    assert (user.role, user.content, user.status) == ("user", "hello", MessageStatus.COMPLETE)
    assert user.tokens == 1
    assert reply.status == MessageStatus.COMPLETE
    assert reply.content == "".join(e.text for e in events if isinstance(e, ReplyTextArrived))
    assert reply.tokens is not None and reply.tokens > 0
    assert reply.model == "offline"


async def test_the_offline_models_digests_add_no_entities_of_their_own(store: SqliteChatStore) -> None:
    # Its replies quote counts ("30 tokens") and how to connect a model ("Press F3", "OpenAI"):
    # the panel's entities must stay the conversation's.
    turns = service(store, OfflineModel(COUNTER, word_delay=0))
    first = await collect(turns.send(None, "Where is deploy.sh read? It fails with ConnectionRefusedError"))
    session_id = first[0].session.id  # type: ignore[union-attr]
    await collect(turns.send(session_id, "And the retry in deploy.sh?"))
    wanted = {"deploy.sh", "ConnectionRefusedError"}
    assert {e.label for e in (await turns.preview(session_id)).active} == wanted
    # Also once the session is read back from the store.
    reopened = TurnService(store, OfflineModel(COUNTER, word_delay=0), COUNTER, system_prompt="")
    assert {e.label for e in (await reopened.preview(session_id)).active} == wanted


async def test_the_next_requests_preview_keeps_the_conversations_order(store: SqliteChatStore) -> None:
    """F5 shows it "sent exactly as below, in this order": the last reply after its question."""
    turns = service(store, OfflineModel(COUNTER, word_delay=0))
    first = await collect(turns.send(None, "Where is deploy.sh read?"))
    session_id = first[0].session.id  # type: ignore[union-attr]
    await collect(turns.send(session_id, "And the retry?"))
    view = await turns.preview(session_id)
    stored = [m.id for m in store.messages(session_id)]
    assert [m.sources[0] for m in view.messages if m.form == "verbatim"] == stored


async def test_a_second_message_continues_the_session(store: SqliteChatStore) -> None:
    turns = service(store, OfflineModel(COUNTER, word_delay=0))
    first = await collect(turns.send(None, "one"))
    session_id = first[0].session.id  # type: ignore[union-attr]
    await collect(turns.send(session_id, "two"))
    assert [m.content for m in store.messages(session_id) if m.role == "user"] == ["one", "two"]
    assert len(store.list_sessions()) == 1


async def test_user_message_is_committed_before_the_request(
    store: SqliteChatStore, db_path: Path, fake_server: FakeOpenAIServer
) -> None:
    seen: list[list[str]] = []

    def check(request: dict[str, object]) -> None:
        other = open_store(db_path).store  # a separate connection sees only committed data
        try:
            seen.append([m.content for s in other.list_sessions() for m in other.messages(s.id)])
        finally:
            other.close()

    fake_server.on_request = check
    await collect(service(store, remote(fake_server)).send(None, "durable"))
    assert seen == [["durable", ""]]  # the user's message, and the reply's row, empty so far


async def test_request_carries_system_prompt_and_conversation(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    turns = service(store, remote(fake_server))
    events = await collect(turns.send(None, "first"))
    session_id = events[0].session.id  # type: ignore[union-attr]
    await collect(turns.send(session_id, "second"))
    assert fake_server.requests[-1]["body"]["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "Echo: first"},
        {"role": "user", "content": "second"},
    ]


@pytest.mark.parametrize(
    ("fault", "kind", "partial"),
    [
        ("401", ModelErrorKind.AUTH, False),
        ("429", ModelErrorKind.RATE_LIMIT, False),
        ("500", ModelErrorKind.SERVER, False),
        ("context_length", ModelErrorKind.CONTEXT_LENGTH, False),
        ("slow_first_token:3", ModelErrorKind.TIMEOUT, False),
        # Mid-stream faults: what arrived before the fault is kept.
        ("cutoff", ModelErrorKind.CONNECTION, True),
        ("truncate", ModelErrorKind.CUT, True),
        ("stream_error", ModelErrorKind.SERVER, True),
        ("invalid_json", ModelErrorKind.BAD_RESPONSE, True),
    ],
)
async def test_each_fault_keeps_the_message_and_retry_recovers(
    store: SqliteChatStore, fake_server: FakeOpenAIServer, fault: str, kind: ModelErrorKind, partial: bool
) -> None:
    # Without automatic retries; a context_length error is sent again once, tighter, by itself.
    fake_server.faults.extend([fault, fault] if fault == "context_length" else [fault])
    turns = service(store, remote(fake_server, read_timeout=0.5))
    text = "please answer with several words"
    events = await collect(turns.send(None, text))
    failure = events[-1]
    assert isinstance(failure, ReplyFailed)
    assert failure.error.kind == kind
    assert failure.error.user_message
    session_id = events[0].session.id  # type: ignore[union-attr]
    user, reply = store.messages(session_id)
    assert user.content == text and user.status == MessageStatus.COMPLETE
    if partial:
        assert reply.status == MessageStatus.INTERRUPTED
        assert reply.content and ("Echo: " + text).startswith(reply.content)
    else:
        assert reply.status == MessageStatus.FAILED and reply.content == ""
    assert reply.error == failure.error.user_message

    retried = await collect(turns.retry(session_id))
    assert isinstance(retried[0], ReplyStarted) and retried[0].superseded == (reply.id,)
    assert [type(e) for e in retried].count(ContextCurated) == 1
    completed = [e for e in retried if isinstance(e, ReplyCompleted)]
    assert len(completed) == 1 and completed[0].message.content == "Echo: " + text
    statuses = [m.status for m in store.messages(session_id)]
    assert statuses == [MessageStatus.COMPLETE, MessageStatus.SUPERSEDED, MessageStatus.COMPLETE]
    # The superseded reply is not sent again.
    assert [m["role"] for m in fake_server.requests[-1]["body"]["messages"]] == ["system", "user"]


async def test_reply_is_saved_while_it_streams(store: SqliteChatStore, fake_server: FakeOpenAIServer) -> None:
    """A crash mid-reply loses at most the last flush interval of text."""
    fake_server.reply = "word " * 100
    fake_server.chunk_delay = 0.01
    turns = service(store, remote(fake_server))
    snapshots: list[str] = []
    async for event in turns.send(None, "go"):
        if isinstance(event, ReplyTextArrived):
            (session,) = store.list_sessions()
            snapshots.append(store.messages(session.id)[-1].content)
    assert any(0 < len(s) < len("word " * 100) for s in snapshots)


async def test_retry_with_nothing_sent_says_so(store: SqliteChatStore) -> None:
    session = store.create_session("empty")
    with pytest.raises(NothingToRetry):
        await collect(service(store, OfflineModel(COUNTER)).retry(session.id))


async def test_retry_supersedes_every_reply_after_the_last_user_message_however_many(
    store: SqliteChatStore,
) -> None:
    """Retry looks back from the end a page at a time: replies beyond the first page count too."""
    session = store.create_session("many replies")
    store.add_message(session.id, "user", "first question")
    asked = store.add_message(session.id, "user", "tell me everything")
    replies = [store.add_message(session.id, "assistant", f"part {n}").id for n in range(TAIL_PAGE + 15)]
    events = await collect(service(store, OfflineModel(COUNTER)).retry(session.id))
    superseded = {m.id for m in store.messages(session.id) if m.status is MessageStatus.SUPERSEDED}
    assert superseded == set(replies)
    started = next(e for e in events if isinstance(e, ReplyStarted))
    assert set(started.superseded) == set(replies) and started.message.id > asked.id


async def test_every_request_sends_the_curated_context_and_logs_why(
    store: SqliteChatStore, db_path: Path, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "Noted. " * 30
    turns = service(store, remote(fake_server, window=900))
    session_id = None
    topics = ["the billing deploy fails with ConnectionRefusedError", "my sister Maya moved to Lisbon"]
    for n in range(12):
        events = await collect(turns.send(session_id, f"Note {n}: {topics[n % 2]}. " + "Detail. " * 20))
        session_id = events[0].session.id  # type: ignore[union-attr]
        curated = next(e for e in events if isinstance(e, ContextCurated))
        body = fake_server.requests[-1]["body"]
        # What was sent is exactly what the engine planned, and it fits the budget.
        assert len(body["messages"]) <= 2 + 2 * n
        assert curated.view.tokens <= curated.view.budget
    assert session_id is not None
    sent = [m["content"] for m in fake_server.requests[-1]["body"]["messages"]]
    assert sent[0] == "You are terse." and sent[-1].startswith("Note 11:")
    # Older assistant replies were pruned or summarized, and the ledger says so with reasons.
    ledger = store.ledger(session_id)
    demoted = [e for e in ledger if e.action in ("prune", "transform")]
    assert demoted and all(e.reason and e.scores for e in demoted)
    # The user's own words were not touched without consent (no policy: they are only left out).
    users = {str(m.id) for m in store.messages(session_id) if m.role == "user"}
    assert not [e for e in demoted if e.target in users]
    # A fresh service (the app restarted) rebuilds the same states from the store.
    again = open_store(db_path).store
    try:
        states = again.load_curation(session_id).items
        assert {str(i) for i, r in states.items() if r.state.value != "active"} == {e.target for e in demoted}
    finally:
        again.close()


async def test_the_users_message_is_reported_before_the_request_and_even_when_planning_fails(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    from engine.errors import StoreError

    turns, session_id = await after_one_turn(store, fake_server)
    seen: list[TurnEvent] = []
    async for event in turns.send(session_id, "second"):
        seen.append(event)
        if isinstance(event, UserMessageSaved):
            # Drawn once the request is planned and sent: planning did not wait for the screen.
            last = store.messages(session_id)[-1]
            assert last.role == "assistant" and last.status is MessageStatus.STREAMING
    assert [type(e) for e in seen][:2] == [UserMessageSaved, ReplyStarted]
    assert [type(e) for e in seen].count(ContextCurated) == 1

    def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("The disk is full.")

    store.save_curation = broken  # type: ignore[method-assign]
    seen.clear()
    with pytest.raises(StoreError):
        async for event in turns.send(session_id, "third, when the disk fills up"):
            seen.append(event)
    # The message is stored all the same, and the screen was told, so it is not typed twice.
    assert [type(e) for e in seen] == [UserMessageSaved]
    assert store.messages(session_id)[-1].content == "third, when the disk fills up"
