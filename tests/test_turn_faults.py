"""How a turn rides out network faults: automatic retries with a visible wait, a request that is too
long for the model, a server that says its window is smaller, and continuing a cut-off reply.

Real SQLite store, real openai client, the loopback fake server; only the retry wait is injected,
so that the tests see every wait the user would see without sleeping through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

import pytest

from engine.chat import MessageStatus
from engine.curation.prompt import CONTINUE_INSTRUCTION
from engine.errors import ModelErrorKind
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.conversation_tail import NothingToContinue
from engine.turn.events import (
    ContextCurated,
    ReplyCompleted,
    ReplyFailed,
    ReplyResumed,
    RetryScheduled,
    TurnEvent,
    TurnNotice,
    UserMessageSaved,
)
from engine.turn.retrying import RetryPolicy
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_turn_plan_view import BrokenViewTurns

T = TypeVar("T")

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


@pytest.fixture
def model(chat_model: Callable[[int], OpenAIChatModel]) -> OpenAIChatModel:
    return chat_model(8192)


class Waits:
    """Stands in for asyncio.sleep: records each wait, and yields to the loop as a real one would."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        await asyncio.sleep(0)


def service(
    store: SqliteChatStore,
    model: OpenAIChatModel,
    waits: Waits | None = None,
    *,
    retries: int = 2,
    kind: type[TurnService] = TurnService,
) -> TurnService:
    return kind(
        store,
        model,
        COUNTER,
        system_prompt="",
        flush_interval=0.05,
        retry_policy=RetryPolicy(retries=retries, base_delay=1.0),
        sleep=waits or Waits(),
        view_delay=0,  # every turn shows its plan, however quick the reply (test_turn_plan_view)
    )


async def collect(events: object) -> list[TurnEvent]:
    return [event async for event in events]  # type: ignore[attr-defined]


def of_type(events: list[TurnEvent], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


# --- automatic retries ------------------------------------------------------------------------


async def test_a_rate_limit_waits_as_the_server_asks_then_the_reply_arrives(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.extend(["429:3000", "429:1500"])
    waits = Waits()
    events = await collect(service(store, model, waits).send(None, "hello there"))
    scheduled = of_type(events, RetryScheduled)
    assert [(s.retry, s.retries, s.delay, s.error.kind) for s in scheduled] == [
        (1, 2, 3.0, ModelErrorKind.RATE_LIMIT),
        (2, 2, 1.5, ModelErrorKind.RATE_LIMIT),
    ]
    assert waits.seconds == [3.0, 1.5]  # the wait the user is shown is the wait that happens
    assert isinstance(events[-1], ReplyCompleted)
    assert events[-1].message.content == "Echo: hello there"
    assert len(fake_server.requests) == 3
    # One reply row, not one per attempt.
    assert [m.role for m in store.messages(events[-1].message.session_id)] == ["user", "assistant"]


@pytest.mark.parametrize("fault", ["500", "502", "503"])
async def test_server_errors_back_off_then_fail_clearly_keeping_the_message(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer, fault: str
) -> None:
    fake_server.faults.extend([fault] * 3)
    waits = Waits()
    events = await collect(service(store, model, waits).send(None, "keep me"))
    assert waits.seconds == [1.0, 2.0]  # exponential backoff
    failure = events[-1]
    assert isinstance(failure, ReplyFailed)
    assert failure.error.kind == ModelErrorKind.SERVER
    assert fault in failure.error.user_message and "Try again" in failure.error.user_message
    user, reply = store.messages(failure.message.session_id)
    assert user.content == "keep me"
    assert reply.status == MessageStatus.FAILED and reply.error == failure.error.user_message


async def test_errors_not_worth_repeating_are_not_retried(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.append("401")
    waits = Waits()
    events = await collect(service(store, model, waits).send(None, "hi"))
    assert waits.seconds == [] and not of_type(events, RetryScheduled)
    assert isinstance(events[-1], ReplyFailed) and events[-1].error.kind == ModelErrorKind.AUTH
    assert len(fake_server.requests) == 1


async def test_a_wait_longer_than_the_limit_is_left_to_the_user(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.append("429:600000")  # "retry after ten minutes"
    waits = Waits()
    events = await collect(service(store, model, waits).send(None, "hi"))
    assert waits.seconds == []
    failure = events[-1]
    assert isinstance(failure, ReplyFailed)
    assert "Wait 600 s" in failure.error.user_message


async def test_stopping_during_the_wait_keeps_the_message_and_sends_nothing_more(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.append("503")
    turns = TurnService(
        store, model, COUNTER, system_prompt="", retry_policy=RetryPolicy(retries=2, base_delay=30.0)
    )
    seen: list[TurnEvent] = []
    waiting = asyncio.Event()

    async def run() -> None:
        async for event in turns.send(None, "important words"):
            seen.append(event)
            if isinstance(event, RetryScheduled):
                waiting.set()

    task = asyncio.create_task(run())
    await asyncio.wait_for(waiting.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    session_id = of_type(seen, UserMessageSaved)[0].session.id
    user, reply = store.messages(session_id)
    assert user.content == "important words"
    assert reply.status == MessageStatus.FAILED
    assert len(fake_server.requests) == 1


# --- too long for the model -------------------------------------------------------------------


async def long_session(turns: TurnService, fake_server: FakeOpenAIServer) -> int:
    """Six turns of about 300 words each: about 3,600 word-pieces of history."""
    session_id: int | None = None
    for topic in ("rivers", "mountains", "glaciers", "deserts", "forests", "oceans"):
        text = f"Tell me about {topic}. " + " ".join(f"{topic}{n}" for n in range(300))
        events = await collect(turns.send(session_id, text))
        assert isinstance(events[-1], ReplyCompleted)
        session_id = events[-1].message.session_id
    assert session_id is not None
    return session_id


async def test_too_long_for_the_server_tightens_the_budget_sends_again_and_says_what_was_left_out(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    turns = service(store, model)
    session_id = await long_session(turns, fake_server)
    fake_server.enforced_window = 2000  # the model turns out to be smaller than configured
    events = await collect(turns.send(session_id, "and what about volcanoes?"))

    assert isinstance(events[-1], ReplyCompleted), events[-1]
    assert events[-1].message.content == "Echo: and what about volcanoes?"
    assert [r["outcome"] for r in fake_server.requests[-2:]] == ["fault", "complete"]
    views = [e.view for e in of_type(events, ContextCurated)]
    assert [v.window for v in views] == [8192, 2000]  # the window the server stated
    assert views[-1].tokens <= views[-1].budget
    (notice,) = of_type(events, TurnNotice)
    left_out = [i for i in views[-1].items if not i.in_prompt and (v := views[0].item(i.id)) and v.in_prompt]
    assert left_out, "something had to go to fit 2,000 tokens"
    assert "too long" in notice.text and "2,000" in notice.text
    assert all(f"#{item.id}" in notice.text for item in left_out[:5])
    # Nothing was deleted: every message is still in the store.
    assert len(store.messages(session_id)) == 14
    # The smaller window holds for the next turn too: no second refusal.
    events = await collect(turns.send(session_id, "thanks"))
    assert isinstance(events[-1], ReplyCompleted)
    assert fake_server.requests[-1]["outcome"] == "complete"
    assert of_type(events, ContextCurated)[0].view.window == 2000


async def test_too_long_twice_fails_clearly_after_one_automatic_try(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.extend(["context_length:8192", "context_length:8192"])
    events = await collect(service(store, model).send(None, "hello"))
    assert len(fake_server.requests) == 2
    # The server's stated window was no smaller, so the budget shrank by a quarter.
    assert [e.view.window for e in of_type(events, ContextCurated)] == [8192, 6144]
    failure = events[-1]
    assert isinstance(failure, ReplyFailed) and failure.error.kind == ModelErrorKind.CONTEXT_LENGTH
    assert [m.content for m in store.messages(failure.message.session_id) if m.role == "user"] == ["hello"]


async def test_too_long_with_views_that_fail_still_sends_less_again_and_says_so(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.append("context_length:8192")
    events = await collect(service(store, model, kind=BrokenViewTurns).send(None, "hello"))
    assert isinstance(events[-1], ReplyCompleted) and events[-1].message.content == "Echo: hello"
    assert [r["outcome"] for r in fake_server.requests] == ["fault", "complete"]
    notices = [n.text for n in of_type(events, TurnNotice)]
    # Each plan's view failed and was said to; then what happened to the request, in short.
    assert all("context panel could not show" in text for text in notices[:-1]) and len(notices) == 3
    assert "too long" in notices[-1] and "sent less" in notices[-1]


async def test_a_window_the_server_reports_smaller_than_configured_is_the_one_used(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.model_window = 4096  # GET /v1/models/fake-model says max_model_len 4096
    events = await collect(service(store, model).send(None, "hello"))
    (notice,) = of_type(events, TurnNotice)
    assert "4,096" in notice.text and "8,192" in notice.text
    assert of_type(events, ContextCurated)[0].view.window == 4096
    assert isinstance(events[-1], ReplyCompleted)


async def test_a_larger_reported_window_does_not_override_the_config(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.model_window = 131072
    events = await collect(service(store, model).send(None, "hello"))
    assert not of_type(events, TurnNotice)
    assert of_type(events, ContextCurated)[0].view.window == 8192


# --- continuing a cut-off reply ---------------------------------------------------------------


async def test_a_cut_reply_continues_in_the_same_message(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "one two three four five six seven eight"
    fake_server.faults.append("cutoff")
    turns = service(store, model)
    first = await collect(turns.send(None, "count please"))
    assert isinstance(first[-1], ReplyFailed)
    cut = first[-1].message
    assert cut.status == MessageStatus.INTERRUPTED and cut.content
    partial = cut.content

    fake_server.reply = " nine ten"
    events = await collect(turns.resume(cut.session_id))
    (resumed,) = of_type(events, ReplyResumed)
    assert resumed.message.id == cut.id
    done = events[-1]
    assert isinstance(done, ReplyCompleted)
    assert done.message.id == cut.id
    assert done.message.content == partial + " nine ten"
    assert done.message.status == MessageStatus.COMPLETE
    sent = fake_server.requests[-1]["body"]["messages"]
    assert sent[-2:] == [
        {"role": "assistant", "content": partial},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    # The instruction is not part of the conversation: it is not stored.
    assert [m.content for m in store.messages(cut.session_id)] == ["count please", partial + " nine ten"]
    with pytest.raises(NothingToContinue):
        await collect(turns.resume(cut.session_id))


async def test_a_continue_that_fails_keeps_what_was_there(
    store: SqliteChatStore, model: OpenAIChatModel, fake_server: FakeOpenAIServer
) -> None:
    fake_server.faults.extend(["cutoff", "401"])
    turns = service(store, model)
    first = await collect(turns.send(None, "count please"))
    cut = first[-1].message  # type: ignore[union-attr]
    events = await collect(turns.resume(cut.session_id))
    failure = events[-1]
    assert isinstance(failure, ReplyFailed) and failure.message.id == cut.id
    assert failure.message.content == cut.content
    assert failure.message.status == MessageStatus.INTERRUPTED
