"""A turn's plan goes to the panel beside its reply: the reply is read at once; the view of the plan
is begun once the model keeps the turn waiting (VIEW_DELAY), and reported as soon as it is built,
once, before the turn's outcome. A reply whole before then goes without it."""

from __future__ import annotations

import time

import pytest

from engine.chat import MessageStatus
from engine.curation.context_view import ContextView
from engine.turn.events import ContextCurated, ReplyCompleted, ReplyTextArrived, TurnEvent, TurnNotice
from engine.turn.pending_view import VIEW_DELAY
from engine.turn.service import STOPPED_BY_USER, TurnService
from engine.turn.steps import Planned
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_turn import COUNTER, collect, remote
from tests.test_turn_stopping import stopped_after_five_pieces, stopped_while_the_model_thinks

pytestmark = pytest.mark.usefixtures("models_closed")


class SlowViewTurns(TurnService):
    """Turns whose view takes as long to build as a very long session's would; counts the views built."""

    view_seconds = 0.0
    views_built = 0

    def _view(self, session_id: int, planned: Planned) -> ContextView:
        self.views_built += 1
        time.sleep(self.view_seconds)
        return super()._view(session_id, planned)


def turns(
    store: SqliteChatStore, server: FakeOpenAIServer, *, view_seconds: float, view_delay: float = VIEW_DELAY
) -> SlowViewTurns:
    service = SlowViewTurns(
        store, remote(server), COUNTER, system_prompt="You are terse.", view_delay=view_delay
    )
    service.view_seconds = view_seconds
    return service


def kinds(events: list[TurnEvent]) -> list[type]:
    return [type(e) for e in events]


async def test_a_reply_whole_before_its_plan_is_due_goes_without_it_and_the_next_preview_follows(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 20
    service = turns(store, fake_server, view_seconds=0.5, view_delay=30.0)
    started = time.monotonic()
    events = await collect(service.send(None, "hello"))
    # Not built at all: the reply did not wait for it, nor did the turn's end.
    assert ContextCurated not in kinds(events) and service.views_built == 0
    assert isinstance(events[-1], ReplyCompleted) and events[-1].message.content == "word " * 20
    assert time.monotonic() - started < 5
    # What the panel shows next: the next request, with the reply in it.
    preview = await service.preview(events[-1].message.session_id)
    assert preview.upcoming and preview.item(events[-1].message.id) is not None


async def test_a_plan_begun_before_the_reply_is_whole_is_shown_before_the_outcome(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 20
    events = await collect(turns(store, fake_server, view_seconds=0.5, view_delay=0).send(None, "hello"))
    order = kinds(events)
    # The whole reply arrived while the view was built; the plan follows, then the outcome.
    last_text = max(n for n, kind in enumerate(order) if kind is ReplyTextArrived)
    assert order.count(ContextCurated) == 1
    assert last_text < order.index(ContextCurated) < order.index(ReplyCompleted) == len(order) - 1
    curated = next(e for e in events if isinstance(e, ContextCurated))
    assert curated.view.turn == 1 and not curated.view.upcoming


async def test_a_plan_due_while_the_reply_streams_is_shown_among_its_words(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 60
    fake_server.chunk_delay = 0.02  # 1.2 s of words, the first at once; the plan is due after 0.3 s
    events = await collect(turns(store, fake_server, view_seconds=0.0, view_delay=0.3).send(None, "hello"))
    order = kinds(events)
    texts = [n for n, kind in enumerate(order) if kind is ReplyTextArrived]
    assert order.count(ContextCurated) == 1
    assert texts[0] < order.index(ContextCurated) < texts[-1]
    assert isinstance(events[-1], ReplyCompleted)


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
    service = turns(store, fake_server, view_seconds=1.5, view_delay=0)
    events, reply = await stopped_after_five_pieces(store, service)
    assert not [e for e in events if isinstance(e, ContextCurated)]  # still being built
    assert reply.status == MessageStatus.INTERRUPTED and reply.error == STOPPED_BY_USER
    assert reply.content.startswith("".join(e.text for e in events if isinstance(e, ReplyTextArrived)))


class BrokenViewTurns(TurnService):
    """Turns whose view fails to build, as a bug in it would."""

    def _view(self, session_id: int, planned: Planned) -> ContextView:
        raise RuntimeError("the view broke")


async def test_a_view_that_fails_is_said_and_the_reply_goes_on_whole(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "word " * 60
    fake_server.chunk_delay = 0.01  # 0.6 s of words; the view is begun, and fails, after 0.2 s
    service = BrokenViewTurns(store, remote(fake_server), COUNTER, system_prompt="", view_delay=0.2)
    events = await collect(service.send(None, "hello"))
    order = kinds(events)
    # The view was only for the panel: the request and its reply never depended on it.
    assert isinstance(events[-1], ReplyCompleted) and events[-1].message.content == "word " * 60
    (notice,) = [e for e in events if isinstance(e, TurnNotice)]
    assert "context panel could not show" in notice.text and "RuntimeError: the view broke" in notice.text
    texts = [n for n, kind in enumerate(order) if kind is ReplyTextArrived]
    assert ContextCurated not in order and texts[0] < order.index(TurnNotice) < texts[-1]
    (session,) = store.list_sessions()
    user, reply = store.messages(session.id)
    assert user.content == "hello" and reply.status == MessageStatus.COMPLETE
    assert reply.content == "word " * 60
    # The panel catches up with the next request: its preview is built the ordinary way.
    preview = await service.preview(session.id)
    assert preview.upcoming and preview.item(reply.id) is not None
