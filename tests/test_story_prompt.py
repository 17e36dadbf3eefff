"""The story's lines are asked for with a prompt of their own (what happened, in order), through the
summarizer's fenced request, against the loopback fake server; a message's summary keeps the
summary prompt."""

from __future__ import annotations

from typing import Any

import pytest

from providers.openai_summarizer import INSTRUCTIONS
from providers.story_prompt import STORY_INSTRUCTIONS
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_curation_models import is_summary, source_of
from tests.test_story_model import TOLD, asked_with_a_model, is_story

pytestmark = pytest.mark.usefixtures("models_closed")


def system_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


async def test_a_story_line_is_asked_with_the_story_prompt_and_a_summary_with_the_summary_one(
    fake_server: FakeOpenAIServer, store: SqliteChatStore
) -> None:
    turns, session_id = await asked_with_a_model(store, fake_server, TOLD)
    await turns.write_summaries(session_id)
    asked = [r["body"] for r in fake_server.requests if is_summary(r["body"])]
    stories = [b for b in asked if is_story(b) or source_of(b).startswith("- [")]
    summaries = [b for b in asked if b not in stories]
    assert stories and summaries
    story_head = STORY_INSTRUCTIONS.split("{fence}")[0]
    for body in stories:
        said = system_prompt(body)
        assert said.startswith(story_head) and "who asked what" in said and "word for word" in said
        assert "BEGIN SOURCE" in body["messages"][1]["content"]  # the same fencing as a summary's
        assert "Tell what happened" in body["messages"][1]["content"]
    for body in summaries:
        assert system_prompt(body).startswith(INSTRUCTIONS.split("{fence}")[0])
