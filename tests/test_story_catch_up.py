"""Connecting to a model in a long session does not flood it: each run after a turn asks for a few
of the story's lines, the newest segments first, and the rest arrive on the next runs (loopback fake
server)."""

from __future__ import annotations

import pytest

from engine.chat import BuildProgress
from engine.summaries.service import MAX_STORY_LINES_PER_RUN
from engine.summaries.story_book import SESSION_FIRST_ID
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_curation_models import source_of
from tests.test_story_model import TOLD, asked_with_a_model, is_story

pytestmark = pytest.mark.usefixtures("models_closed")


async def test_the_catch_up_asks_a_few_segments_a_run_newest_first_and_the_rest_later(
    fake_server: FakeOpenAIServer, store: SqliteChatStore
) -> None:
    turns, session_id = await asked_with_a_model(store, fake_server, TOLD)
    runs: list[list[int]] = []
    while True:
        before = len(fake_server.requests)
        await turns.write_summaries(session_id)
        asked = [r["body"] for r in fake_server.requests[before:] if is_story(r["body"])]
        if not asked:
            break
        runs.append([int(source_of(body).split()[0].lstrip("#")) for body in asked])
        assert len(runs) < 50
    assert len(runs) >= 2, "a long session's catch-up takes several runs"
    assert all(len(run) <= MAX_STORY_LINES_PER_RUN for run in runs)
    firsts = [first for run in runs for first in run]
    assert firsts == sorted(firsts, reverse=True)  # the newest segments first
    stored = {w.first_id for w in store.load_story_lines(session_id) if w.first_id != SESSION_FIRST_ID}
    assert set(firsts) <= stored  # the later runs wrote the rest


async def test_no_story_line_is_asked_while_a_long_session_is_still_being_read(
    fake_server: FakeOpenAIServer, store: SqliteChatStore
) -> None:
    # The latest messages read first are segmented from their own start: lines asked of them
    # would name segments the whole session does not have.
    turns, session_id = await asked_with_a_model(store, fake_server, TOLD)

    def reading(progress: BuildProgress | None) -> None:
        with turns.curations.held(session_id) as held:
            assert held.cached is not None
            held.cached.state.building = progress

    reading(BuildProgress(500, 5_000))
    before = len(fake_server.requests)
    await turns.write_summaries(session_id)
    assert not [r for r in fake_server.requests[before:] if is_story(r["body"])]
    reading(None)  # read whole
    await turns.write_summaries(session_id)
    assert [r for r in fake_server.requests[before:] if is_story(r["body"])]
