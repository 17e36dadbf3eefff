"""Helpers for tests of the turn and context services: the two services as the app makes them, a
document of a known size on one topic, sending a message through the turn service, and a session
that moves away from a topic."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from engine.curation.context_service import ContextService
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.events import UserMessageSaved
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))


def services(store: SqliteChatStore, model: OpenAIChatModel) -> tuple[TurnService, ContextService]:
    """The turn service on ``store`` and ``model``, and the context service on its curations."""
    turns = TurnService(store, model, COUNTER, system_prompt="", flush_interval=0.05)
    return turns, ContextService(turns.curations)


@contextlib.contextmanager
def opened(database: Path, model: OpenAIChatModel) -> Iterator[tuple[TurnService, ContextService]]:
    """:func:`services` on the store at ``database``, closed on leaving (a restart: leave, open again)."""
    store = SqliteChatStore(database)
    try:
        yield services(store, model)
    finally:
        store.close()


Start = Callable[[], contextlib.AbstractContextManager[tuple[TurnService, ContextService]]]
"""Opens :func:`opened` afresh on one database, each call a start of the app (the ``started`` fixture)."""


def document(topic: str, sentences: int) -> str:
    """About ``sentences * 10`` tokens about ``topic``, sharing no other word with other topics."""
    return " ".join(f"The {topic} note {i} says {topic}{i} matters." for i in range(sentences))


async def send_text(turns: TurnService, session_id: int | None, text: str) -> tuple[int, int]:
    """Send ``text`` (in a new session when ``session_id`` is None); the session's id and the
    stored message's."""
    message_id = 0
    async for event in turns.send(session_id, text):
        if isinstance(event, UserMessageSaved):
            session_id, message_id = event.session.id, event.message.id
    assert session_id is not None
    return session_id, message_id


async def away_from_the_harbour(turns: TurnService, server: FakeOpenAIServer) -> tuple[int, int]:
    """A new session that asks about the harbour crane, then about six other topics, each answer
    free of topic words; the session's id and the first message's."""
    server.reply = "Answer: " + " ".join(f"point{i} stands." for i in range(40))
    session_id, first = await send_text(turns, None, "Tell me about the harbour crane.")
    for topic in ("violin", "glacier", "orchard", "lantern", "compass", "meadow"):
        await send_text(turns, session_id, f"Tell me about the {topic}.")
    return session_id, first
