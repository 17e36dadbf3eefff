"""The context's picture says which messages not sent in full the story so far quotes: a pruned
message the story quotes is not one the model sees nothing of (engine.curation.story_quotes)."""

from __future__ import annotations

from textual.widgets import Static

from engine.curation import context_building
from engine.curation.context_building import build_view
from engine.curation.context_view import ItemDetail, ItemView, Mark, Section
from engine.curation.items import ItemState
from engine.curation.story_quotes import story_reason
from tests.apphelpers import make_app, wait_for
from tests.test_story import LARGE, play
from tui.screens.inspect import InspectScreen


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
    # The reason names the line and quotes the message's own words in it.
    note = quoted.reason.split("; quoted in the story so far, line [")[1]
    assert quoted.label in note.split("]")[0]
    words = note.split(': "', 1)[1].removesuffix('"').rstrip("…").split(": ", 1)[-1]
    assert words and words in curation.by_id[quoted.id].text

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


def test_the_reason_quotes_the_message_s_own_words_or_the_whole_line_when_they_cannot_be_told_apart() -> None:
    line = ((4, 5), "- [#4, #5] user: the refund for the May invoice | assistant: issued on Friday")
    said = story_reason(5, [line])
    assert said == 'quoted in the story so far, line [#4, #5]: "assistant: issued on Friday"'
    # A quote holding the separator: the pieces do not match the sources, so the whole line, shortened.
    odd = ((4, 5), "- [#4, #5] user: pick a | b or c | assistant: " + "b, since " * 20)
    said = story_reason(4, [odd, line])
    assert said.startswith('quoted in the story so far, line [#4, #5]: "user: pick a | b or c | assistant: b')
    assert said.endswith('…" (and 1 more line)')


async def test_the_why_dialog_shows_a_hostile_story_line_inert() -> None:
    hostile = "- [#7] user: \x1b[2J[bold red]boom[/] \u202eevil"
    view = ItemView(
        7, "user", "#7", "hello", 12, ItemState.PRUNED, False, Section.PRUNED, Mark.PRUNED, "pruned",
        story=(hostile,),
    )  # fmt: skip
    detail = ItemDetail(view, "hello", None, "context", None, ())

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(InspectScreen(detail))
        await wait_for(pilot, lambda: isinstance(app.screen, InspectScreen) and app.screen.is_mounted)
        told = str(app.screen.query_one("#inspect-story", Static).render())
    assert "[bold red]boom[/]" in told  # as text, not markup
    assert "\x1b" not in told and "\u202e" not in told
    assert "␛[2J" in told
