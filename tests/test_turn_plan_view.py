"""A turn's plan goes to the panel beside its reply: the reply is read at once, and the view of the
plan is reported as soon as it is built, once, before the turn's outcome."""

from __future__ import annotations

import time

from engine.chat import MessageStatus
from engine.context_view import ContextView
from engine.turn import STOPPED_BY_USER, TurnService, _Planned
from engine.turn_events import ContextCurated, ReplyCompleted, ReplyTextArrived, TurnEvent
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_turn import (
    COUNTER,
    collect,
    remote,
    stopped_after_five_pieces,
    stopped_while_the_model_thinks,
)


class SlowViewTurns(TurnService):
    """Turns whose view takes as long to build as a very long session's would."""

    view_seconds = 0.0

    def _view(self, session_id: int, planned: _Planned) -> ContextView:
        time.sleep(self.view_seconds)
        return super()._view(session_id, planned)


def turns(store: SqliteChatStore, server: FakeOpenAIServer, *, view_seconds: float) -> SlowViewTurns:
    service = SlowViewTurns(store, remote(server), COUNTER, system_prompt="You are terse.")
    service.view_seconds = view_seconds
    return service


def kinds(events: list[TurnEvent]) -> list[type]:
    return [type(e) for e in events]


async def test_a_quick_reply_is_read_while_its_plan_is_still_being_drawn(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 20
    events = await collect(turns(store, fake_server, view_seconds=0.5).send(None, "hello"))
    order = kinds(events)
    # The whole reply arrived while the view was built; the plan follows, then the outcome.
    last_text = max(n for n, kind in enumerate(order) if kind is ReplyTextArrived)
    assert order.count(ContextCurated) == 1
    assert last_text < order.index(ContextCurated) < order.index(ReplyCompleted) == len(order) - 1
    curated = next(e for e in events if isinstance(e, ContextCurated))
    assert curated.view.turn == 1 and not curated.view.upcoming


async def test_the_plan_is_shown_while_a_slow_model_thinks(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.append("slow_first_token:0.5")
    events = await collect(turns(store, fake_server, view_seconds=0.0).send(None, "hello"))
    order = kinds(events)
    assert order.count(ContextCurated) == 1
    assert order.index(ContextCurated) < order.index(ReplyTextArrived)
    assert isinstance(events[-1], ReplyCompleted)


async def test_stopping_while_the_model_thinks_after_the_plan_is_shown_ends_the_request(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    service = turns(store, fake_server, view_seconds=0.0)
    reply = await stopped_while_the_model_thinks(store, service, fake_server, at=ContextCurated)
    assert reply.status == MessageStatus.FAILED and reply.error == STOPPED_BY_USER


async def test_stopping_while_the_plan_is_being_drawn_keeps_what_arrived(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 200
    fake_server.chunk_delay = 0.01
    events, reply = await stopped_after_five_pieces(store, turns(store, fake_server, view_seconds=1.5))
    assert not [e for e in events if isinstance(e, ContextCurated)]  # still being built
    assert reply.status == MessageStatus.INTERRUPTED and reply.error == STOPPED_BY_USER
    assert reply.content.startswith("".join(e.text for e in events if isinstance(e, ReplyTextArrived)))
