"""The built-in offline model answers deterministically with a digest of what it was sent."""

from __future__ import annotations

from engine.chat import PromptMessage
from engine.protocols.models import ModelEvent, ReplyFinished, TextDelta, UsageReport
from engine.text.tokens import load_counter
from providers.offline import OfflineModel

PROMPT = [
    PromptMessage("system", "You are a helpful assistant."),
    PromptMessage("user", "hello"),
    PromptMessage("assistant", "Hi!"),
    PromptMessage("user", "what did I say?"),
]


async def reply_to(messages: list[PromptMessage]) -> tuple[str, list[ModelEvent]]:
    model = OfflineModel(load_counter("offline", model_is_offline=True), word_delay=0)
    events = [event async for event in model.stream(messages)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return text, events


async def test_reply_is_a_digest_of_the_request() -> None:
    text, events = await reply_to(PROMPT)
    assert "Offline model" in text
    assert "4 messages (1 system, 2 from you, 1 reply)" in text
    assert "> what did I say?" in text
    assert sum(isinstance(e, TextDelta) for e in events) > 10  # it streams, like a real model
    assert isinstance(events[-1], ReplyFinished)
    assert any(isinstance(e, UsageReport) for e in events)


async def test_same_input_same_reply() -> None:
    first, _ = await reply_to(PROMPT)
    second, _ = await reply_to(PROMPT)
    assert first == second


async def test_a_huge_message_is_summarised_not_echoed() -> None:
    text, _ = await reply_to([PromptMessage("user", "word " * 100_000)])
    assert "100,000 words" in text
    assert len(text) < 2_000
