"""The memory section of a new session's prompt: what earlier sessions left, shown in the
preview, following edits, left out with a note when it does not fit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine.curation.session_curation import SessionCuration
from engine.memory.memories import MEMORY_HEADER, memory_budget
from engine.memory.service import MemoryService
from engine.turn.service import TurnService
from providers.offline import OfflineModel
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.memory_helpers import COUNTER, T0
from tests.test_memory import add, wired

# --- the memory section in the prompt -------------------------------------------------------------


@pytest.fixture
async def remote(fake_server: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    model = OpenAIChatModel(
        model="fake-model", base_url=fake_server.base_url, api_key="k", context_window=8192
    )
    yield model
    await model.aclose()


async def test_a_new_session_sends_the_memories_an_earlier_session_left(
    store: SqliteChatStore, memory: MemoryService, fake_server: FakeOpenAIServer, remote: OpenAIChatModel
) -> None:
    turns = wired(store, remote, memory)
    first = None
    for text in ("Let's use PostgreSQL 16 for billing; I prefer asyncpg.", "We decided: billing/api.py."):
        async for event in turns.send(first, text):
            session = getattr(event, "session", None)
            if session is not None:
                first = session.id
    assert first is not None
    sent = fake_server.requests[-1]["body"]["messages"]
    assert not any(MEMORY_HEADER in m["content"] for m in sent)  # no memories yet

    remembered = await memory.remember(first)
    assert remembered.memory is not None and remembered.memory.importance >= 0.7

    async for _ in turns.send(None, "What database did we pick?"):
        pass
    sent = fake_server.requests[-1]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "You are terse."}
    assert sent[1]["role"] == "system"
    assert sent[1]["content"].startswith(MEMORY_HEADER)
    assert remembered.memory.summary in sent[1]["content"]
    budget = memory_budget(int(8192 * 0.7))
    assert COUNTER.count(sent[1]["content"]) + 4 <= budget

    # The earlier session does not get its own memory back: its log already holds it.
    async for _ in turns.send(first, "And the driver?"):
        pass
    sent = fake_server.requests[-1]["body"]["messages"]
    assert not any(MEMORY_HEADER in m["content"] for m in sent)


async def test_the_section_shows_in_the_preview_and_follows_edits_and_deletes(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    turns = wired(store, OfflineModel(COUNTER, word_delay=0), memory)
    kept = add(store, 0.9, T0, summary="The user's name is Ada.")
    without = TurnService(store, OfflineModel(COUNTER), COUNTER, system_prompt="You are terse.")
    # Before the first message: the empty view counts the section a new session would carry.
    assert (await turns.preview(None)).tokens > (await without.preview(None)).tokens

    async for _ in turns.send(None, "hello"):
        pass
    session = store.latest_session()
    assert session is not None
    view = await turns.preview(session.id)
    (section,) = [m for m in view.messages if m.form == "memory"]
    assert "Ada" in section.content and section.role == "system"

    await memory.edit(kept.id, "The user's name is Grace.")
    view = await turns.preview(session.id)
    (section,) = [m for m in view.messages if m.form == "memory"]
    assert "Grace" in section.content and "Ada" not in section.content

    await memory.delete(kept.id)
    view = await turns.preview(session.id)
    assert [m for m in view.messages if m.form == "memory"] == []


def test_a_memory_section_that_does_not_fit_is_left_out_with_a_note() -> None:
    curation = SessionCuration(window=300, counter=COUNTER)
    curation.set_memory(MEMORY_HEADER + "\n- " + "remembered " * 400)
    new = curation.add_message(1, "user", "hello", COUNTER.count("hello"))
    result = curation.plan(new)
    assert all(m.form != "memory" for m in result.messages)
    assert result.tokens <= result.budget_tokens
    assert any("memory section" in note for note in result.notes)

    curation.set_memory(MEMORY_HEADER + "\n- 2025-03-01: short.")
    result = curation.plan(new)
    assert [m.form for m in result.messages] == ["memory", "verbatim"]
