"""/keep with Pilot: a rule keeps an old message in the request with the rule as its reason, /keep
alone lists the rules, Alt+D removes one after asking, and typing in the list goes to the composer."""

from __future__ import annotations

from engine.curation.context_view import ContextView
from tests.apphelpers import (
    chat,
    command,
    opened,
    option_rows,
    running_on_fake_model,
    say,
    send,
    toasts,
    wait_for,
)
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.dialogs import ConfirmScreen
from tui.screens.keep_rules import KeepRulesScreen

REPLY = "Noted, thanks. " * 12
"""About 60 tokens: a few turns fill the 490-token budget of a 700-token window."""
SCHEMA = "The database schema has a users table and an orders table. " * 4
RULE = "anything about the [bold]database[/] schema"


def context(app: HeedfulApp) -> ContextView:
    view = chat(app).context
    assert view is not None
    return view


def rows_left(screen: KeepRulesScreen) -> list[str]:
    """The rows that name a rule (none: the list says there are no rules)."""
    return [r for r in option_rows(screen) if not r.startswith("No keep rules")]


async def test_keep_lists_and_removes_a_rule_that_keeps_an_old_message(fake_server: FakeOpenAIServer) -> None:
    replies = iter([SCHEMA])
    async with running_on_fake_model(
        fake_server, 700, lambda _: next(replies, REPLY), notifications=True
    ) as (app, pilot):
        await send(pilot, "The database schema: users and orders.")
        first = context(app).items[1].id  # the reply about the schema
        await command(pilot, app, f"/keep {RULE}")
        await wait_for(pilot, lambda: any("Keeping what matches" in t for t in toasts(app)))
        assert any(f"“{RULE}”: 2 messages now" in t for t in toasts(app))  # shown as typed, not as markup
        for n in range(6):
            await say(pilot, app, f"Turn {n}: something else about the garden.", keep=True)
        item = context(app).item(first)
        assert item is not None and f'kept by your rule "{RULE}"' in item.reason

        screen_under = chat(app)
        await command(pilot, app, "/keep")
        screen = await opened(pilot, app, KeepRulesScreen)
        assert rows_left(screen) == [RULE]  # shown as typed, not as markup
        await pilot.press("h", "i")  # typing, not a choice: it goes to the composer
        assert screen_under.composer.text == "hi"
        assert app.screen is screen

        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: app.screen is screen and not rows_left(screen))
        assert screen_under.session is not None
        assert app.services.store.keep_rules(screen_under.session.id) == []
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen_under)
        item = context(app).item(first)
        assert item is not None and "kept by your rule" not in item.reason


async def test_a_rule_without_words_to_match_is_refused(fake_server: FakeOpenAIServer) -> None:
    async with running_on_fake_model(fake_server, 700, "Noted.", notifications=True) as (app, pilot):
        await send(pilot, "The database schema: users and orders.")
        await command(pilot, app, "/keep anything about the")
        await wait_for(pilot, lambda: any("words that name it" in t for t in toasts(app)))
        session = chat(app).session
        assert session is not None and app.services.store.keep_rules(session.id) == []
        assert chat(app).composer.text == "/keep anything about the"  # left to be reworded
