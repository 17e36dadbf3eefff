"""The openai adapter's connection: warmed up off the event loop before the first request (which
then loads no more of the client), and closed when the reader stops or is cancelled."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

from engine.chat import PromptMessage
from engine.protocols.models import ModelEvent, ReplyFinished, TextDelta
from providers.openai_chat import OpenAIChatModel
from tests.fake_openai import FakeOpenAIServer
from tests.test_openai_chat import ECHO, collect, wait_for_outcome

MakeModel = Callable[..., OpenAIChatModel]


# --- warming up ------------------------------------------------------------------------------


async def test_warming_up_asks_the_server_nothing_and_the_first_request_then_streams(
    chat_model: MakeModel, fake_server: FakeOpenAIServer
) -> None:
    model = chat_model()
    await model.warm_up()
    await model.warm_up()  # once is enough; again is harmless
    assert fake_server.requests == []  # no network until the user sends
    events = await collect(model)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ECHO
    assert isinstance(events[-1], ReplyFinished)


async def test_a_request_made_while_the_model_warms_up_waits_for_that_warm_up(
    chat_model: MakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app opens a long session first, then warms the model up: a message sent meanwhile
    # must not build a second client (nor import openai) on the event loop.
    model = chat_model()
    made: list[str] = []
    slowly = model._new_client

    def new_client() -> object:
        made.append(threading.current_thread().name)
        time.sleep(0.2)
        return slowly()

    monkeypatch.setattr(model, "_new_client", new_client)
    warming = asyncio.ensure_future(model.warm_up())
    deadline = time.monotonic() + 10
    while not made:  # the warm-up is building its client
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    events = await collect(model)
    await warming
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ECHO
    assert len(made) == 1 and made[0] != threading.main_thread().name


FIRST_REQUEST = """
import asyncio, sys
from engine.chat import PromptMessage
from providers.openai_chat import OpenAIChatModel
from tests.fake_openai import FakeOpenAIServer

CLIENT_PACKAGES = ("openai", "httpx2", "httpcore2", "h11", "anyio")

async def main() -> None:
    with FakeOpenAIServer() as server:
        model = OpenAIChatModel(
            model="fake-model", base_url=server.base_url, api_key="k", context_window=8192
        )
        await model.warm_up()
        before = set(sys.modules)
        async for _ in model.stream([PromptMessage("user", "hi")]):
            pass
        await model.aclose()
        print(sorted(m for m in set(sys.modules) - before if m.split(".")[0] in CLIENT_PACKAGES))

asyncio.run(main())
"""


def test_after_warming_up_the_first_request_loads_no_more_of_the_client_on_the_event_loop() -> None:
    # In a fresh interpreter: in this one, earlier tests have long loaded everything.
    ran = subprocess.run([sys.executable, "-c", FIRST_REQUEST], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]", ran.stdout


# --- stopping --------------------------------------------------------------------------------


async def test_cancelling_the_consumer_closes_the_connection(
    fake_server: FakeOpenAIServer, chat_model: MakeModel
) -> None:
    fake_server.reply = "word " * 300
    fake_server.chunk_delay = 0.01
    model = chat_model()
    arrived: list[ModelEvent] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream([PromptMessage("user", "hi")]):
            arrived.append(event)
            first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert arrived and not isinstance(arrived[-1], ReplyFinished)
    assert await wait_for_outcome(fake_server) == "client_disconnected"
    # The same model (and client) still works afterwards.
    fake_server.chunk_delay = 0
    assert (await collect(model))[-1] == ReplyFinished("stop")


async def test_a_consumer_that_stops_reading_closes_the_connection(
    fake_server: FakeOpenAIServer, chat_model: MakeModel
) -> None:
    fake_server.reply = "word " * 300
    fake_server.chunk_delay = 0.01
    stream = chat_model().stream([PromptMessage("user", "hi")])
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()
    assert await wait_for_outcome(fake_server) == "client_disconnected"
