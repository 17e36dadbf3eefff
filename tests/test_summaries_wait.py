"""The model's background summaries wait while a reply is being prepared (the user's message
stored, the curator asked, the context planned): the user's request goes out first and nothing is
asked for or handed over until it is on its way; then they are written.

Real SQLite store, real openai client against the loopback fake server."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from engine.turn.events import ReplyStarted
from engine.turn.foreground import Foreground
from sessions.store import SqliteChatStore
from tests.curator_answers import NEUTRAL
from tests.fake_openai import FakeOpenAIServer
from tests.test_curation_models import history, is_curator, is_summary, service, turn

pytestmark = pytest.mark.usefixtures("models_closed")

CURATOR_THINKS = 0.5
"""The curator's time to answer: the reply is being prepared that long."""


async def test_summaries_are_asked_for_only_once_the_reply_being_prepared_is_on_its_way(
    fake_server: FakeOpenAIServer, store: SqliteChatStore
) -> None:
    summaries_asked: list[float] = []
    curator_asked = asyncio.Event()
    loop = asyncio.get_running_loop()

    def answer(body: dict[str, Any]) -> str:
        if is_curator(body):
            loop.call_soon_threadsafe(curator_asked.set)
            return json.dumps(NEUTRAL)
        if is_summary(body):
            summaries_asked.append(time.monotonic())
            return "A short summary."
        return "Ok."

    fake_server.reply = answer
    session_id = history(store)
    turns = service(store, fake_server, summaries=True)
    await turn(turns, session_id, "How do I set up service-9 behind the proxy?")
    summaries_asked.clear()  # the first turn's plan wanted summaries: written below, during the second
    curator_asked.clear()
    fake_server.json_delay = CURATOR_THINKS
    on_its_way = 0.0

    async def second_turn() -> None:
        nonlocal on_its_way
        async for event in turns.send(session_id, "And service-10, the same way?"):
            if isinstance(event, ReplyStarted):
                on_its_way = time.monotonic()

    replying = asyncio.create_task(second_turn())
    await curator_asked.wait()
    written = await asyncio.wait_for(turns.write_summaries(session_id), timeout=30)
    await replying

    assert written > 0 and summaries_asked, "the summaries the first plan wanted are written"
    assert min(summaries_asked) >= on_its_way > 0, "none was asked for before the reply's request"


async def test_quiet_waits_for_every_reply_being_prepared() -> None:
    foreground = Foreground()
    await asyncio.wait_for(foreground.quiet(), timeout=1)  # none under way: at once

    first, second = foreground.begin(), foreground.begin()
    waiting = asyncio.create_task(foreground.quiet())
    await asyncio.sleep(0)  # it waits
    foreground.end(first)
    foreground.end(first)  # again, as when the reply ends after its request went out
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # a waiter woken by those ends would have returned by now
    assert not waiting.done(), "one reply is still being prepared"
    foreground.end(second)
    await asyncio.wait_for(waiting, timeout=1)
