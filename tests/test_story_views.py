"""The context's picture says which messages not sent in full the story so far quotes: a pruned
message the story quotes is not one the model sees nothing of (engine.curation.story_quotes)."""

from __future__ import annotations

from engine.curation import context_building
from engine.curation.context_building import build_view
from engine.curation.context_view import Mark
from tests.test_story import LARGE, play


def test_a_pruned_message_the_story_quotes_says_so_and_one_it_does_not_quote_does_not() -> None:
    turns = [(k % 4, k) for k in range(150)]
    curation, result = play(turns, window=LARGE, plan_each=False)
    last = curation.last_user()
    assert last is not None
    view = build_view(curation, result, new_id=last.id)
    told = {source: line for sources, line in result.story for source in sources}
    pruned = [i for i in view.items if i.mark is Mark.PRUNED]

    quoted = next(i for i in pruned if i.id in told)
    assert quoted.story == (told[quoted.id],)
    assert quoted.reason.startswith("no longer fits the budget")
    assert "; quoted in the story so far: [" in quoted.reason
    assert quoted.label in quoted.reason.split("quoted in the story so far: ")[1]

    unquoted = next(i for i in pruned if i.id not in told)
    assert unquoted.story == ()
    assert "story" not in unquoted.reason

    # Messages sent whole are never quoted; every quoted one is marked, and only those.
    assert all(i.id not in told for i in view.items if i.sent_in_full)
    assert {i.id for i in view.items if i.story} == set(told)

    # Pinned, it is sent whole: the next picture (reusing this one's views) no longer says so.
    curation.pin(quoted.id)
    after = build_view(curation, curation.plan(last), new_id=last.id)
    pinned = after.item(quoted.id)
    assert pinned is not None and pinned.mark is Mark.PINNED
    assert pinned.story == () and "story" not in pinned.reason
    context_building._EARLIER.pop(curation, None)
    assert build_view(curation, curation.plan(last), new_id=last.id) == after
