"""Standing instructions in the app (issue 36): one said in a message goes with every request and the
panel shows it; /standing lists them, Alt+E edits one in the user's words, Alt+A adds one, Alt+D
removes one after asking; the changes are stored, and text is shown as typed, never as markup."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input

from tests.apphelpers import (
    chat,
    command,
    opened,
    option_rows,
    running_on_fake_model,
    say,
    send,
    wait_for,
)
from tests.fake_openai import FakeOpenAIServer
from tui.screens.dialogs import ConfirmScreen
from tui.screens.standing import StandingEditScreen, StandingScreen

FRENCH = "From now on answer in [bold]French[/]."
"""A standing instruction with what would be markup: it must be shown as typed."""


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["body"]["messages"] if m["role"] == "system")


async def test_a_standing_instruction_is_sent_shown_edited_added_and_removed(
    fake_server: FakeOpenAIServer,
) -> None:
    reply = "Noted, thanks. " * 12
    async with running_on_fake_model(fake_server, 700, reply, notifications=True) as (app, pilot):
        await send(pilot, FRENCH)
        for n in range(3):
            await say(pilot, app, f"Turn {n}: something else about the garden.", keep=True)
        assert FRENCH in system_text(fake_server.requests[-1])  # in every request, verbatim
        box = chat(app).query_one("#context-standing")
        await wait_for(pilot, lambda: "Standing instructions: 1 sent" in str(box.render()))
        assert FRENCH in str(box.render())  # as typed, not as markup

        under = chat(app)
        await command(pilot, app, "/standing")
        screen = await opened(pilot, app, StandingScreen)
        [row] = option_rows(screen)
        assert row.startswith("current · instruction · #") and row.endswith(FRENCH)
        await pilot.press("h", "i")  # typing, not a choice: it goes to the composer
        assert under.composer.text == "hi"
        under.composer.clear()

        await pilot.press("alt+e")
        edit = await opened(pilot, app, StandingEditScreen)
        assert edit.query_one(Input).value == FRENCH
        edit.query_one(Input).value = "From now on answer in Spanish."
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen and option_rows(screen)[0].endswith("Spanish."))
        assert "edited" in option_rows(screen)[0]

        await pilot.press("alt+a")
        edit = await opened(pilot, app, StandingEditScreen)
        edit.query_one(Input).value = "Always answer in German."
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen and len(option_rows(screen)) == 2)
        assert option_rows(screen)[0].startswith("replaced")  # German replaces Spanish: the same subject
        assert option_rows(screen)[1].startswith("current · instruction · by you")

        await pilot.press("down", "alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: app.screen is screen and len(option_rows(screen)) == 1)
        assert option_rows(screen)[0].startswith("current") and option_rows(screen)[0].endswith("Spanish.")
        session = under.session
        assert session is not None
        edits = app.services.store.standing_edits(session.id)
        assert [(e.message_id is None, e.text) for e in edits] == [
            (False, "From now on answer in Spanish."),
            (True, None),
        ]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is under)
        await say(pilot, app, "And the roses?", keep=True)
        sent = system_text(fake_server.requests[-1])
        assert "From now on answer in Spanish." in sent and "French" not in sent and "German" not in sent


async def test_the_request_about_a_change_carries_both_decisions(fake_server: FakeOpenAIServer) -> None:
    async with running_on_fake_model(fake_server, 700, "Noted.", notifications=True) as (app, pilot):
        await send(pilot, "We decided to use PostgreSQL, not MySQL.")
        await say(pilot, app, "Actually, switch to SQLite.", keep=True)
        await say(pilot, app, "What is a good name for the garden?", keep=True)
        sent = system_text(fake_server.requests[-1])
        assert "Actually, switch to SQLite." in sent and "PostgreSQL" not in sent
        await say(pilot, app, "Why did we move off Postgres?", keep=True)
        sent = system_text(fake_server.requests[-1])
        current, _, earlier = sent.partition("Replaced since")
        assert "Actually, switch to SQLite." in current
        assert "We decided to use PostgreSQL, not MySQL." in earlier
