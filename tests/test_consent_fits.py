"""The consent dialog on a short terminal: every answer's button and the first rows stay on screen
(the rows scroll instead), so the user can see what Enter, Esc and the Alt keys do."""

from __future__ import annotations

import pytest
from textual.widgets import Button, OptionList

from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, wait_for
from tui.screens.consent import ConsentScreen


def seed_long_questions(turns: int) -> None:
    """``turns`` long questions, each with a short answer: more than the offline model's budget,
    so F4 asks about many of the user's messages at once."""
    store = open_store(paths.database_path()).store
    session = store.create_session("Many long questions")
    for turn in range(turns):
        steps = " ".join(f"the step {n} of plan {turn} needs care." for n in range(60))
        question = f"Question {turn}: {steps}"
        store.add_message(session.id, "user", question, tokens=len(question) // 4)
        store.add_message(session.id, "assistant", f"Answer {turn}: fine.", tokens=5)
    store.close()


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 50)])
async def test_the_consent_dialog_shows_its_buttons_and_rows_whole(size: tuple[int, int]) -> None:
    seed_long_questions(20)
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: chat(app).context is not None)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, ConsentScreen))
        screen = app.screen
        assert isinstance(screen, ConsentScreen)
        asked = len(screen.request.items)
        assert asked > 8, "the scene needs more rows than a short terminal shows"
        await pilot.pause()
        await pilot.pause()
        dialog = screen.query_one(".dialog").region
        for button in screen.query(Button):
            assert screen.region.contains_region(button.region), f"{button.label} is cut off at {size}"
            assert dialog.contains_region(button.region), f"{button.label} is outside the dialog at {size}"
        rows = screen.query_one("#consent-rows", OptionList)
        assert dialog.contains_region(rows.region)
        shown = rows.scrollable_content_region.height
        assert shown >= 2
        assert rows.max_scroll_y == asked - shown, "the rows not shown are reached by scrolling"
