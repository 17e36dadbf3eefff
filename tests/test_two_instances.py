"""Two Heedfuls on one session (two windows, one database): each request carries what the other
added or changed, and the user is told the session was reloaded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.events import SessionReloaded, TurnEvent, UserMessageSaved
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions import paths
from sessions.store import SqliteChatStore
from tests.apphelpers import make_app, toasts, views, wait_for
from tests.fake_openai import FakeOpenAIServer

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


@pytest.fixture
def models(chat_model: Callable[[int], OpenAIChatModel]) -> list[OpenAIChatModel]:
    return [chat_model(8192) for _ in range(2)]


def window(store: SqliteChatStore, model: OpenAIChatModel) -> TurnService:
    return TurnService(store, model, COUNTER, system_prompt="You are terse.", view_delay=0)


async def turn(turns: TurnService, session_id: int | None, text: str) -> list[TurnEvent]:
    return [event async for event in turns.send(session_id, text)]


def last_request(server: FakeOpenAIServer) -> list[str]:
    return [str(m["content"]) for m in server.requests[-1]["body"]["messages"] if m["role"] != "system"]


async def test_each_request_carries_the_other_windows_turns_and_edits(
    tmp_path: Path, fake_server: FakeOpenAIServer, models: list[OpenAIChatModel]
) -> None:
    database = tmp_path / "shared" / "heedful.db"
    first_store, second_store = SqliteChatStore(database), SqliteChatStore(database)
    try:
        first, second = window(first_store, models[0]), window(second_store, models[1])
        fake_server.reply = "noted one"
        opened = await turn(first, None, "A1 my cat is called Miso")
        assert not any(isinstance(e, SessionReloaded) for e in opened)
        saved = opened[0]
        assert isinstance(saved, UserMessageSaved)
        session_id = saved.session.id
        second_store.message_page(session_id, limit=10)  # the second window opens the session
        fake_server.reply = "noted two"
        assert not any(isinstance(e, SessionReloaded) for e in await turn(second, session_id, "B1 hello"))
        assert last_request(fake_server) == ["A1 my cat is called Miso", "noted one", "B1 hello"]

        # The first window's next request carries the second's turn, and says it reloaded.
        events = await turn(first, session_id, "A2 and my dog?")
        assert isinstance(events[0], SessionReloaded) and events[0].session_id == session_id
        assert last_request(fake_server) == [
            "A1 my cat is called Miso",
            "noted one",
            "B1 hello",
            "noted two",
            "A2 and my dog?",
        ]
        # An edit made in the first window reaches the second one's next request.
        first_store.update_message(saved.message.id, content="A1 my cat is called Tofu")
        events = await turn(second, session_id, "B2 what is my cat called?")
        assert isinstance(events[0], SessionReloaded)
        assert last_request(fake_server)[0] == "A1 my cat is called Tofu"
        assert last_request(fake_server)[-1] == "B2 what is my cat called?"
        # Its own turns alone never count as changed elsewhere.
        events = await turn(second, session_id, "B3 thanks")
        assert not any(isinstance(e, SessionReloaded) for e in events)
    finally:
        first_store.close()
        second_store.close()


async def test_the_app_shows_the_other_windows_turns_and_says_so(fake_server: FakeOpenAIServer) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        from tests.apphelpers import send

        await send(pilot, "A1 from this window")
        await wait_for(pilot, lambda: len(views(app)) == 2 and "complete" in views(app)[1].message.status)
        session_id = views(app)[0].message.session_id
        other = SqliteChatStore(paths.database_path())
        try:
            other.add_message(session_id, "user", "B1 from the other window")
            other.add_message(session_id, "assistant", "B1's reply")
        finally:
            other.close()
        await send(pilot, "A2 from this window")
        await wait_for(pilot, lambda: any("changed in another window" in t for t in toasts(app)))
        await wait_for(pilot, lambda: len(views(app)) == 6)
        shown = [v.message.content for v in views(app)[:5]]
        assert shown[2:5] == ["B1 from the other window", "B1's reply", "A2 from this window"]
        sent = [str(m["content"]) for m in fake_server.requests[-1]["body"]["messages"]]
        assert "B1 from the other window" in sent and sent[-1] == "A2 from this window"
