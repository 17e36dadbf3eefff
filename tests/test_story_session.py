"""The story's first line tells the whole session: its size, its topics, and the key messages of its
largest topics, within the story's share (engine.summaries.story_session)."""

from __future__ import annotations

import re

from tests.test_story import LARGE, play


def test_a_long_session_s_story_opens_with_one_line_for_the_whole_session() -> None:
    turns = [(n // 8 % 4, n) for n in range(160)]  # eight exchanges a topic, round and round
    curation, result = play(turns, window=LARGE, plan_each=False)
    assert len(curation.state.story.segments) >= 6
    sources, line = result.story[0]
    assert line.startswith("- [") and "the session so far" in line
    assert re.search(r"[\d,]+ messages in [\d,]+ topics", line)
    assert 1 <= len(sources) <= 3
    sent_whole = {s for m in result.messages if m.form == "verbatim" for s in m.sources}
    for source in sources:
        item = curation.by_id[source]
        assert item.role == "user" and source not in sent_whole
        assert item.label in line
    phrases = line.split("mostly: ", 1)[1].split(" | ")
    assert all(any(p.rstrip("…") in curation.by_id[s].text for s in sources) for p in phrases)
    # The segments' lines follow, oldest first, and the whole story keeps its share.
    assert len(result.story) > 1 and "the session so far" not in result.story[1][1]
    story = next(m for m in result.messages if m.form == "story")
    assert story.tokens <= int((curation.budget.tokens - 3) * curation.profile.story_share)
