"""What the user sees of their messages and pins, driven with Pilot: the top of the panel says in
words which of their messages is not being sent, what looks relevant again, and a pin past the pin
limit asks first (Enter cancels) while one past the whole budget is refused."""

from __future__ import annotations

from dataclasses import replace

from textual.pilot import Pilot
from textual.widgets import Static

from engine.curation.consent import ConsentChoice, ConsentItem, ConsentRequest
from engine.curation.user_room import LEFT_OUT_CHOICES
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import asked, chat, command, fake_provider, make_app, say, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.turnhelpers import document
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.consent import ConsentAnswer, ConsentScreen
from tui.screens.dialogs import ConfirmScreen
from tui.screens.large_message import LargeMessageScreen


def configure(server: FakeOpenAIServer, window: int) -> None:
    fake_provider(server, window)
    server.reply = "Noted."


def state_of(screen: ChatScreen, item_id: int) -> str | None:
    """The state the context shown says message ``item_id`` is in."""
    item = screen.context.item(item_id) if screen.context is not None else None
    return item.state.value if item is not None else None


def notices(app: HeedfulApp) -> list[str]:
    """What the app has told the user lately (its notifications, shown as toasts)."""
    return [n.message for n in app._notifications]


def alerts(app: HeedfulApp) -> str:
    return str(chat(app).context_panel.query_one("#context-alerts").render())


async def settle(pilot: Pilot[None], app: HeedfulApp) -> None:
    """Put off a consent dialog that opened by itself (the panel still says what is wanted)."""
    if isinstance(app.screen, ConsentScreen):
        await pilot.press("escape")
    await wait_for(pilot, lambda: not isinstance(app.screen, ConsentScreen) and chat(app).settled)


async def test_a_message_sent_anyway_is_then_said_not_sent_at_the_top_of_the_panel(
    fake_server: FakeOpenAIServer,
) -> None:
    configure(fake_server, 700)  # a 490-token budget
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None)  # the budget is known
        screen.composer.insert(document("glacier", 60))  # ~610 tokens
        await pilot.press("enter")
        await asked(pilot, app, LargeMessageScreen)
        await pilot.press("alt+o")  # "send it once"
        await wait_for(pilot, lambda: screen.context is not None and screen.context.item(1) is not None)
        await settle(pilot, app)
        await wait_for(pilot, lambda: "is too big for later requests" in alerts(app))
        assert alerts(app).startswith("⚠ Your message #1 (")
        await say(pilot, app, "Thanks. A good name for a cat?", keep=True)
        await settle(pilot, app)
        await wait_for(
            pilot, lambda: "#1" in alerts(app) and "is not being sent: it does not fit" in alerts(app)
        )
        assert "F4 to choose" in alerts(app)


async def test_a_message_you_summarized_is_suggested_not_recalled_when_relevant_again(
    fake_server: FakeOpenAIServer,
) -> None:
    configure(fake_server, 2000)
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        screen = chat(app)
        await say(pilot, app, "Tell me about the harbour and its lighthouse.", keep=True)
        assert screen.session is not None
        screen.context_actions.record_consent(
            screen.session.id, ConsentAnswer({1: ConsentChoice.SUMMARIZE}, None)
        )
        await wait_for(pilot, lambda: state_of(screen, 1) == "summarized")
        for n in range(3):
            await say(pilot, app, f"Something else entirely, number {n}.", keep=True)
        await say(pilot, app, "Back to the harbour: what about its lighthouse?", keep=True)
        await wait_for(pilot, lambda: "#1 looks relevant again · Alt+R restores it" in alerts(app))
        assert 1 not in sent_ids(app)


def sent_ids(app: HeedfulApp) -> set[int]:
    view = chat(app).context
    assert view is not None
    return {s for m in view.messages if m.form == "verbatim" for s in m.sources}


def pinned_in_store(item_id: int) -> bool:
    store = open_store(paths.database_path()).store
    try:
        session = store.latest_session()
        assert session is not None
        return any(e.action == "pin" for e in store.ledger(session.id, target=str(item_id)))
    finally:
        store.close()


async def test_a_pin_past_the_limit_asks_with_cancel_as_default_and_past_the_budget_is_refused(
    fake_server: FakeOpenAIServer,
) -> None:
    configure(fake_server, 2000)  # a 1,400-token budget: pins past 700 ask first
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await say(pilot, app, document("harbour", 30), keep=True)  # #1, ~310 tokens
        await say(pilot, app, document("violin", 50), keep=True)  # #3, ~510 tokens
        await say(pilot, app, document("glacier", 100), keep=True)  # #5, ~1,010 tokens
        await command(pilot, app, "/pin #1")
        await wait_for(
            pilot, lambda: any(t.startswith("Pinned #1: it is always sent verbatim") for t in notices(app))
        )

        await command(pilot, app, "/pin #3")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert "goes past your pin limit of 50% of the budget" in app.screen.question
        await pilot.press("enter")  # Cancel has the focus
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await wait_for(pilot, lambda: any("#3 was not pinned." in t for t in notices(app)))
        assert not pinned_in_store(3)
        await command(pilot, app, "/pin #3")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#confirm")
        await wait_for(pilot, lambda: any("past your pin limit of 50%." in t for t in notices(app)))
        assert pinned_in_store(3)

        await command(pilot, app, "/pin #5")
        await wait_for(
            pilot, lambda: any("#5 was not pinned" in t and "whole budget" in t for t in notices(app))
        )
        assert not isinstance(app.screen, ConfirmScreen) and not pinned_in_store(5)


async def test_the_dialog_asked_at_a_send_says_whether_that_message_goes_with_the_others() -> None:
    # "Sent with them as they are" was said of messages the same dialog said are not sent.
    one = ConsentItem(1, "Hi! I'm planning a trip to Lisbon", 23, ConsentChoice.SUMMARIZE)

    def left_out(item_id: int) -> ConsentItem:
        return replace(
            one, item_id=item_id, proposed=ConsentChoice.ATTACH, choices=LEFT_OUT_CHOICES, left_out=True
        )

    cases = [
        ([one], "is sent with them as they are;"),
        ([left_out(1), left_out(3)], "is sent without them;"),
        ([one, left_out(3)], "is sent with the others as they are, without those that no longer fit;"),
    ]
    app = make_app()
    async with app.run_test() as pilot:
        for items, said in cases:
            dialog = ConsentScreen(ConsentRequest(5, tuple(items)), sent="Which tile museum should we visit?")
            await app.push_screen(dialog)
            await wait_for(pilot, lambda dialog=dialog: app.screen is dialog)  # type: ignore[misc]
            text = " ".join(str(s.render()) for s in dialog.query(Static))
            assert f'Your message "Which tile museum should we visit?" {said}' in " ".join(text.split())
            dialog.dismiss(None)
            await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
