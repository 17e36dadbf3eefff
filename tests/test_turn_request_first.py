"""A turn's request is on its way before the screen draws the user's message: drawing holds the
event loop, and the model could be working meanwhile."""

from __future__ import annotations

import time

import pytest

from engine.turn.events import ReplyStarted, UserMessageSaved
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_turn import after_one_turn

pytestmark = pytest.mark.usefixtures("models_closed")


DRAWING = 0.5
"""How long the screen holds the event loop drawing the message, here (much longer than it does)."""


async def test_the_request_reaches_the_server_while_the_screen_draws_the_message(
    store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    turns, session_id = await after_one_turn(store, fake_server)
    asked = len(fake_server.requests)
    arrived: dict[str, int] = {}
    async for event in turns.send(session_id, "second"):
        if isinstance(event, UserMessageSaved | ReplyStarted):
            time.sleep(DRAWING)  # noqa: ASYNC251 - the screen drawing: it holds the loop
            arrived[type(event).__name__] = len(fake_server.requests) - asked
    assert arrived == {"UserMessageSaved": 1, "ReplyStarted": 1}
