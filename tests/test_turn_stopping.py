"""Stopping a turn (as Esc does): what arrived is kept and marked stopped, and a request already
sent is ended, whenever the stop comes."""

from __future__ import annotations

import asyncio

import pytest

from engine.chat import MessageStatus, StoredMessage
from engine.turn.events import ReplyStarted, ReplyTextArrived, TurnEvent
from engine.turn.service import STOPPED_BY_USER, TurnService
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_turn import remote, service, wait_until

pytestmark = pytest.mark.usefixtures("models_closed")


async def stopped_after_five_pieces(
    store: SqliteChatStore, turns: TurnService
) -> tuple[list[TurnEvent], StoredMessage]:
    """Send "go" and stop the turn (as Esc does) once five pieces of the reply arrived: the events
    seen, and the reply as stored."""
    seen: list[TurnEvent] = []
    enough = asyncio.Event()

    async def run() -> None:
        async for event in turns.send(None, "go"):
            seen.append(event)
            if sum(isinstance(e, ReplyTextArrived) for e in seen) >= 5:
                enough.set()

    task = asyncio.create_task(run())
    await asyncio.wait_for(enough.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (session,) = store.list_sessions()
    return seen, store.messages(session.id)[-1]


async def stopped_while_the_model_thinks(
    store: SqliteChatStore,
    turns: TurnService,
    server: FakeOpenAIServer,
    *,
    at: type[TurnEvent],
    busy: bool = False,
) -> StoredMessage:
    """Send "go" to a model that takes 5 s to its first piece, and stop the turn (as Esc does) once
    an ``at`` event is seen (``busy``: while the consumer is still drawing it). Checks that the
    request already sent was ended; returns the reply as stored."""
    server.faults.append("slow_first_token:5")
    seen = asyncio.Event()

    async def run() -> None:
        async for event in turns.send(None, "go"):
            if isinstance(event, at):
                seen.set()
                if busy:
                    await asyncio.sleep(10)  # the UI busy drawing when the user presses Esc

    task = asyncio.create_task(run())
    await asyncio.wait_for(seen.wait(), timeout=10)
    await wait_until(lambda: len(server.requests) == 1)  # sent before anything is read
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: server.requests[0]["outcome"] == "client_disconnected")
    (session,) = store.list_sessions()
    return store.messages(session.id)[-1]


async def test_stopping_keeps_the_partial_reply(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 200
    fake_server.chunk_delay = 0.01
    events, reply = await stopped_after_five_pieces(store, service(store, remote(fake_server)))
    arrived = [e.text for e in events if isinstance(e, ReplyTextArrived)]
    assert reply.status == MessageStatus.INTERRUPTED
    assert reply.error == STOPPED_BY_USER
    assert reply.content.startswith("".join(arrived[:5]))
    assert len(reply.content) < len("word " * 200)


async def test_stopping_before_the_first_word_ends_the_request_already_sent_and_says_stopped(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    """The request goes out before the UI is told the reply started; a stop right then still
    closes it, and the reply is marked stopped, not left "writing"."""
    reply = await stopped_while_the_model_thinks(
        store, service(store, remote(fake_server)), fake_server, at=ReplyStarted, busy=True
    )
    assert reply.status == MessageStatus.FAILED and reply.error == STOPPED_BY_USER
