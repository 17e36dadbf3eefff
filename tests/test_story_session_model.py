"""The session's line written by the connected model (loopback fake server): asked for once the
story has three topics, from its segment lines; stored, so a reopen does not ask again; asked for
again only after several more segments closed."""

from __future__ import annotations

from typing import Any

import pytest

from engine.summaries.story_book import SESSION_FIRST_ID, StoredStoryLine
from engine.summaries.story_session import REFRESH_SEGMENTS, session_request
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_curation_models import is_summary, source_of, turn
from tests.test_story import LARGE, play
from tests.test_story_model import TOLD, asked_with_a_model, caught_up, is_story, story_sent

pytestmark = pytest.mark.usefixtures("models_closed")

SESSION_TOLD = "A week of questions moved from tomatoes to refunds, then training and geometry."


def is_session(body: dict[str, Any]) -> bool:
    """The session line's request: its source is the story's segment lines."""
    return is_summary(body) and source_of(body).startswith("- [")


def reply(body: dict[str, Any]) -> str:
    if is_session(body):
        return SESSION_TOLD
    if is_story(body):
        return TOLD
    if is_summary(body):
        return " ".join(source_of(body).split()[:14])
    return "Noted."


async def test_the_model_writes_the_session_line_from_the_segment_lines_once(
    fake_server: FakeOpenAIServer, store: SqliteChatStore
) -> None:
    turns, session_id = await asked_with_a_model(store, fake_server, TOLD)
    fake_server.reply = reply
    await caught_up(turns, session_id)  # the segments' lines first, the session's last
    asked = [r for r in fake_server.requests if is_session(r["body"])]
    assert len(asked) == 1
    assert len(source_of(asked[0]["body"]).splitlines()) >= 3  # the story's segment lines, one a line
    stored = [line for line in store.load_story_lines(session_id) if line.first_id == SESSION_FIRST_ID]
    assert [line.text for line in stored] == [SESSION_TOLD]
    assert 1 <= len(stored[0].sources) <= 3

    await turn(turns, session_id, "Remind me of the triangle theorem plan.")
    first = story_sent(fake_server)[0]
    assert first == f"- [{', '.join(f'#{s}' for s in stored[0].sources)}] {SESSION_TOLD}"

    # Reopened: the stored line is used; another turn or two close no segment enough to ask again.
    turns.curations.evict(session_id)
    await turn(turns, session_id, "What about the greenhouse tomatoes?")
    await turns.write_summaries(session_id)
    assert story_sent(fake_server)[0].endswith(SESSION_TOLD)
    assert sum(is_session(r["body"]) for r in fake_server.requests) == 1


def test_the_session_line_is_asked_again_only_after_several_more_segments_closed() -> None:
    curation, _result = play([(n // 8 % 4, n) for n in range(160)], window=LARGE, plan_each=False)
    story = curation.state.story
    closed = [s for s in story.segments if s.closed]
    lines, sources = ["- [#1] a line", "- [#20] another"], (1,)
    for newer in range(REFRESH_SEGMENTS + 1):
        last = closed[len(closed) - 1 - newer].fragments[-1].item_id
        written = StoredStoryLine(SESSION_FIRST_ID, last, "m", sources, "h", "told")
        again = session_request(story, written, lines, sources)
        assert (again is not None) == (newer >= REFRESH_SEGMENTS)
    first = session_request(story, None, lines, sources)
    assert first is not None and first.request.text == "\n".join(lines)
    assert (first.first_id, first.last_id) == (SESSION_FIRST_ID, closed[-1].fragments[-1].item_id)
