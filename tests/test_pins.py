"""Pins with limits and suggestions: past the pin limit a pin asks first, past the whole budget it is
refused in words, and a message recalled again and again is suggested for pinning. The context
service the app uses, a real store, the real openai client against the loopback fake server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.curation.context_service import ContextService
from engine.curation.pins import PinOutcome
from engine.curation.user_actions import PinRefused
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.config import load_config
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.turnhelpers import away_from_the_harbour, document, send_text

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
WINDOW = 2000
"""Balanced profile: a 1,400-token budget; the default pin limit is half of it."""


@pytest.fixture
def services(
    store: SqliteChatStore, fake_server: FakeOpenAIServer, chat_model: Callable[[int], OpenAIChatModel]
) -> tuple[TurnService, ContextService]:
    fake_server.reply = "Noted."
    turns = TurnService(store, chat_model(WINDOW), COUNTER, system_prompt="", flush_interval=0.05)
    return turns, ContextService(turns.curations)


async def test_a_pin_past_the_limit_asks_first_and_past_the_budget_is_refused(
    services: tuple[TurnService, ContextService],
) -> None:
    turns, context = services
    session_id, small = await send_text(turns, None, document("harbour", 30))  # ~310 tokens
    session_id, medium = await send_text(turns, session_id, document("violin", 50))  # ~510 tokens
    session_id, big = await send_text(turns, session_id, document("glacier", 100))  # ~1,010 tokens

    allowed = await context.pin_verdict(session_id, small)
    assert allowed.outcome is PinOutcome.ALLOWED
    await context.pin(session_id, small)

    asks = await context.pin_verdict(session_id, medium)
    assert asks.outcome is PinOutcome.CONFIRM
    assert (asks.pinned_tokens, asks.budget, asks.limit) == (allowed.item_tokens, 1400, 0.5)
    assert asks.message.startswith(
        f"Pinning #{medium} ({asks.item_tokens:,} tokens) goes past your pin limit"
    )
    with pytest.raises(PinRefused) as unconfirmed:
        await context.pin(session_id, medium)
    assert unconfirmed.value.verdict.outcome is PinOutcome.CONFIRM
    view = await context.pin(session_id, medium, confirmed=True)
    assert view.item(medium).pinned  # type: ignore[union-attr]
    assert any("past your pin limit of 50%" in alert for alert in view.alerts)

    refused = await context.pin_verdict(session_id, big)
    assert refused.outcome is PinOutcome.REFUSED and refused.after_tokens > refused.budget
    assert "more than the whole budget" in refused.message
    with pytest.raises(PinRefused):
        await context.pin(session_id, big, confirmed=True)
    assert not (await turns.preview(session_id)).item(big).pinned  # type: ignore[union-attr]


async def test_a_message_recalled_again_and_again_is_suggested_for_pinning(
    store: SqliteChatStore, fake_server: FakeOpenAIServer, chat_model: Callable[[int], OpenAIChatModel]
) -> None:
    turns = TurnService(store, chat_model(1200), COUNTER, system_prompt="", flush_interval=0.05)
    context = ContextService(turns.curations)
    session_id, first = await away_from_the_harbour(turns, fake_server)
    suggestion = f"#{first + 1} was recalled in 3 of the last 5 turns · Alt+P pins it"
    for n in range(3):
        view = await turns.preview(session_id)
        assert suggestion not in view.alerts
        await send_text(turns, session_id, f"Back to the harbour crane, question {n}.")
    view = await turns.preview(session_id)
    assert suggestion in view.alerts
    await context.pin(session_id, first + 1)
    assert suggestion not in (await turns.preview(session_id)).alerts


def test_the_pin_limit_is_read_from_the_curation_section(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[curation]\npin_limit = 0.3\n", encoding="utf-8")
    assert load_config(path).config.curation.pin_limit == 0.3
    path.write_text("[curation]\npin_limit = 1.5\n", encoding="utf-8")
    loaded = load_config(path)
    assert loaded.config.curation.pin_limit == 0.5 and loaded.problems
