"""The large-message question on any terminal: a framed dialog whose answers are all on screen,
above the composer, which stays in sight because typing goes on there while it is asked."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Button

from tests.apphelpers import asked, chat, make_app, wait_for
from tui.screens.large_message import LargeMessageScreen

LARGE = " ".join(f"Item {n}: a packing note about sunscreen, adapters and rain jackets." for n in range(900))


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 50)])
async def test_the_large_message_question_is_framed_whole_and_leaves_the_composer_in_sight(
    size: tuple[int, int],
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None)
        screen.composer.focus()
        app.post_message(events.Paste(LARGE))
        await wait_for(pilot, lambda: screen.composer.text != "")
        await pilot.press("enter")
        await asked(pilot, app, LargeMessageScreen)
        question = app.screen
        await pilot.pause()
        dialog = question.query_one(".dialog")
        frame = dialog.region
        assert dialog.styles.border_top[0] != "", f"the dialog has no frame at {size}"
        for button in question.query(Button):
            assert question.region.contains_region(button.region), f"{button.label} is cut off at {size}"
            assert frame.contains_region(button.region), f"{button.label} is outside the dialog at {size}"
        composer = screen.composer.region
        assert not frame.overlaps(composer), f"the dialog hides the composer at {size}"
        await pilot.press("o", "k")
        await wait_for(pilot, lambda: screen.composer.text.endswith("ok"))
        assert app.screen is question, "typing answered the question"
