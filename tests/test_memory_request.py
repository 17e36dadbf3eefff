"""Memories in the next session's request: what the memory screen says goes into new sessions is
what the model is sent, and the offline assessor's notes say what mattered, not the chat's noise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine.chat import PromptMessage
from engine.memory.assessment import assess_offline
from engine.memory.memories import PERMANENT_FROM, expiry_for, memory_budget, select_for_prompt
from engine.turn.attachments import attachment_text
from tests.apphelpers import chat, make_app, option_rows, send, toasts, type_command, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.memory_helpers import COUNTER, T0, memory_at
from tests.test_memory_chat import memories
from tui.screens.memory import MemoryScreen

PLAN = (
    "Hi there, I am back with the invoice importer again. "
    "We decided to move the invoice importer to PostgreSQL 16 and drop SQLite for it. "
    "I prefer small pull requests that reviewers can read in ten minutes."
)


def memory_section(body: dict[str, object]) -> str:
    """The memory section of a chat request's messages ("" when it carries none)."""
    messages = body["messages"]
    assert isinstance(messages, list)
    return "\n".join(
        str(m["content"])
        for m in messages
        if m["role"] == "system" and "earlier sessions" in str(m["content"])
    )


@pytest.mark.parametrize("window", [None, 2_500])  # the model's default window, and a small one
async def test_memories_the_screen_says_are_loaded_are_in_the_new_sessions_request(
    fake_server: FakeOpenAIServer, window: int | None
) -> None:
    fake_server.model_window = window
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    pets = ["Miso", "Tofu", "Natto", "Mochi", "Udon"]  # the oldest goes: five memories at most
    for days, name in enumerate(pets, start=2):
        when = datetime.now(UTC) - timedelta(days=days)
        app.services.memory.store.add_memory(
            None,
            summary=f"The user's cat {name} hates the vacuum cleaner.",
            importance=0.9,
            now=when,
            expires_at=expiry_for(0.9, when),
        )
    async with app.run_test(size=(140, 44), notifications=True) as pilot:
        await send(pilot, PLAN)
        await type_command(pilot, app, "/remember")
        await wait_for(pilot, lambda: any("Remembered" in t for t in toasts(app)))
        (remembered,) = [m for m in memories() if m.session_id is not None]
        assert remembered.importance >= PERMANENT_FROM  # "kept for good"
        assert remembered.summary.startswith("We decided to move the invoice importer")
        assert "echo" not in remembered.tags  # the fake server's "Echo:" replies are not a topic
        await type_command(pilot, app, "/new")
        await wait_for(pilot, lambda: chat(app).session is None)
        await type_command(pilot, app, "/memory")
        await wait_for(
            pilot, lambda: isinstance(app.screen, MemoryScreen) and len(option_rows(app.screen)) == 6
        )
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        said_in = {
            m.summary
            for m, row in zip(screen.items, option_rows(screen), strict=True)
            if "in new sessions" in row and "not in" not in row
        }
        said_out = {
            m.summary
            for m, row in zip(screen.items, option_rows(screen), strict=True)
            if "not in new sessions" in row
        }
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is not screen)
        before = len(fake_server.requests)
        await send(pilot, "What database did we pick?")
    assert remembered.summary in said_in and len(said_in) == 5
    assert said_out == {"The user's cat Udon hates the vacuum cleaner."}
    new_requests = [r for r in fake_server.requests[before:] if r["body"].get("stream")]
    section = memory_section(new_requests[-1]["body"])
    assert all(summary in section for summary in said_in)  # what the screen said, the model got
    assert not any(summary in section for summary in said_out)


def test_the_offline_summary_is_the_telling_sentences_and_its_tags_are_not_echoes() -> None:
    """The first lines were the summary ("Hi there, I am back ... Echo: Hi there ...") and the
    echo server's "Echo:" a tag; the decision and the preference are what a later session needs."""
    conversation = [
        PromptMessage("user", PLAN),
        PromptMessage("assistant", f"Echo: {PLAN}"),
        PromptMessage("user", "Echo that back please, and the file is importer/load.py"),
        PromptMessage("assistant", "Echo: Echo that back please, and the file is importer/load.py"),
    ]
    assessed = assess_offline(conversation)
    assert assessed.summary.startswith(
        "We decided to move the invoice importer to PostgreSQL 16 and drop SQLite for it. "
        "I prefer small pull requests"
    )
    assert "Hi there" not in assessed.summary and "Echo" not in assessed.summary
    assert "echo" not in assessed.tags and "echo" not in assessed.topics
    assert {"postgresql", "sqlite", "importer/load.py"} <= set(assessed.tags)


def test_a_small_models_request_still_has_room_for_a_full_length_memory() -> None:
    """5% of a 2,500-token window's budget (87 tokens) held the header and no memory of the
    offline assessor's full 300-character summary: the screen said it was loaded, the request
    did not carry it."""
    summary = ("We decided to keep invoices in PostgreSQL 16 and I prefer small reviews. " * 5)[:300]
    memory = memory_at(0.9, T0, id_=1, summary=summary)
    budget = memory_budget(int(2_500 * 0.7))
    assert select_for_prompt([memory], T0 + timedelta(days=1), budget, COUNTER) == [memory]
    assert memory_budget(int(128_000 * 0.7)) == int(128_000 * 0.7 * 0.05)  # large windows: as before


def test_an_attached_files_heading_is_not_remembered_as_what_mattered() -> None:
    trace = 'Traceback (most recent call last):\n  File "app.py", line 3\nValueError: no invoices\n'
    assessed = assess_offline(
        [
            PromptMessage("user", "hello there"),
            PromptMessage("user", attachment_text("crash.log", trace.encode())),
        ]
    )
    assert "Attached file" not in assessed.summary and "ValueError: no invoices." in assessed.summary
    assert not any("bytes" in tag for tag in assessed.tags) and "valueerror" in assessed.tags
