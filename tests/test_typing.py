"""Typing is always typing (issue 32, items 1 and 2): the consent dialog opens when the user acts,
never takes their keys for answers, and plain keys never act on a message, wherever the focus is."""

from __future__ import annotations

import contextlib
import re

from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from engine.curation.ledger import EntryKind
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import (
    asked,
    chat,
    make_app,
    running_on_fake_model,
    send,
    stored_messages,
    type_keys,
    wait_for,
)
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.consent import ConsentScreen
from tui.screens.inspect import InspectScreen
from tui.screens.ledger import LedgerScreen
from tui.screens.memory import MemoryScreen
from tui.widgets.context_panel import ContextList
from tui.widgets.message_view import MessageView

WINDOW = 1200


def small_window(
    server: FakeOpenAIServer, reply: str = "Noted, thanks. " * 25
) -> contextlib.AbstractAsyncContextManager[tuple[HeedfulApp, Pilot[None]]]:
    """The app on a 1,200-token window (curator off, see make_app), run by Pilot: a few turns and
    Heedful has to ask."""
    return running_on_fake_model(server, WINDOW, reply)


BY_THE_USER = re.compile(r"\b(by you|you chose|you asked|you pinned|your edit|your choice)\b")
"""How a ledger reason says the user did it (not, say, an overflow note that asks them to)."""


def user_actions() -> list[tuple[str, str, str, str]]:
    """Every ledger entry the user made: kind, target, action, reason. An overflow note is
    Heedful's account of a request ("messages you chose to keep whole are sent past the budget"),
    not something the user did."""
    store = open_store(paths.database_path()).store
    try:
        return [
            (e.kind.value, e.target, e.action, e.reason)
            for s in store.list_sessions()
            for e in store.ledger(s.id)
            if BY_THE_USER.search(e.reason) and e.kind != EntryKind.OVERFLOW
        ]
    finally:
        store.close()


def not_keep(actions: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    return [a for a in actions if (a[0], a[2]) != ("consent", "keep")]


def everything_typed_is_kept(app: HeedfulApp, typed: list[str]) -> None:
    """Every message typed is in the store, or still in the composer (perhaps run together with
    the next, when an Enter answered a dialog instead of sending)."""
    (screen,) = [s for s in app.screen_stack if isinstance(s, ChatScreen)]  # perhaps under a question
    kept = [m.content for m in stored_messages() if m.role == "user"] + [screen.composer.text]
    lost = [text for text in typed if not any(text in k for k in kept)]
    assert not lost, lost


async def until_heedful_asks(pilot: Pilot[None], app: HeedfulApp) -> None:
    """Send long messages until the next request has a question about the user's older ones (it
    is asked at the next send, or F4)."""
    screen = chat(app)
    for n in range(12):
        await send(pilot, f"Note {n}: " + "the shed roof leaks near the window and the gutter is full. " * 8)
        if screen.context is not None and screen.context.consent is not None:
            return
    raise AssertionError("Heedful never had a question")


# --- item 1: the consent dialog ----------------------------------------------------------------


async def send_large(pilot: Pilot[None], app: HeedfulApp) -> ChatScreen:
    """After a first turn, send a document large enough that Heedful asks how to send it; the
    chat screen, once it asks."""
    from tui.screens.large_message import LargeMessageScreen

    await send(pilot, "Here comes the log.")
    screen = chat(app)
    screen.composer.insert("The deploy log says the billing service timed out at step nine. " * 200)
    await pilot.press("enter")
    await asked(pilot, app, LargeMessageScreen)
    return screen


async def sent_large(pilot: Pilot[None], screen: ChatScreen) -> int:
    """The id of the large message, once its turn is over."""
    await wait_for(pilot, lambda: screen.settled and screen.turn_view.sent_id is not None)
    assert screen.turn_view.sent_id is not None
    return screen.turn_view.sent_id


async def test_typing_straight_on_after_each_send_never_answers_for_the_user(
    fake_server: FakeOpenAIServer,
) -> None:
    """The issue's steps: ten messages at a 1,200-token window, typing right on after each Enter and
    while each reply lands. Words full of a, m, space, K, S and X (the old dialog's keys)."""
    middle = "the shed roof leaks near the window and the gutter is full of leaves again " * 8
    typed = [f"Question {n}: Keep Six eXtra apples, {middle}a map and my notes, mostly." for n in range(10)]
    async with small_window(fake_server) as (app, pilot):
        screen = chat(app)
        for text in typed:
            head, tail = text.split(middle)
            await type_keys(pilot, head)  # while the last reply streams
            await wait_for(pilot, lambda head=head: screen.composer.text.endswith(head))  # type: ignore[misc]
            await wait_for(pilot, lambda: screen.settled)  # it lands mid-message
            screen.composer.insert(middle)  # pasted
            await type_keys(pilot, tail + "\n")
        await wait_for(pilot, lambda: screen.settled)
        assert not not_keep(user_actions()), "nothing but keep was answered, and no message acted on"
        everything_typed_is_kept(app, typed)
        asked_now = screen.context is not None and screen.context.consent is not None
        assert (
            asked_now
            or any(isinstance(s, ConsentScreen) for s in app.screen_stack)
            or any(a[0] == "consent" for a in user_actions())
        ), "Heedful had a question (else this test measured nothing)"


async def test_printable_keys_in_the_consent_dialog_go_to_the_composer(fake_server: FakeOpenAIServer) -> None:
    async with small_window(fake_server) as (app, pilot):
        await until_heedful_asks(pilot, app)
        screen = chat(app)
        await pilot.press("f4")
        dialog = await asked(pilot, app, ConsentScreen)
        await pilot.press(*"Ma ", "K", "S", "X", "s", "r", "m", "a")
        assert app.screen is dialog, "still asking"
        assert screen.composer.text == "Ma KSXsrma"
        assert not user_actions()
        await pilot.press("enter")  # the safe answer: keep, or for a message that cannot fit, none yet
        await wait_for(pilot, lambda: app.screen is screen)
        assert not not_keep(user_actions())


async def test_keys_typed_before_the_dialog_was_drawn_never_answer_it(fake_server: FakeOpenAIServer) -> None:
    async with small_window(fake_server) as (app, pilot):
        await until_heedful_asks(pilot, app)
        screen = chat(app)
        # Keys the terminal read before the dialog was on screen, handled after it opened.
        early = [events.Key("a", "a"), events.Key("enter", None), events.Key("escape", None)]
        await pilot.press("f4")
        dialog = await asked(pilot, app, ConsentScreen)
        for key in early:
            app.post_message(key)
        await pilot.pause()
        await pilot.pause()
        assert app.screen is dialog, "neither the Enter nor the Esc meant for the chat answered it"
        assert screen.composer.text == "a"
        assert not user_actions()


async def test_sending_a_large_message_asks_in_the_users_words_and_enter_keeps_it_whole(
    fake_server: FakeOpenAIServer,
) -> None:
    async with small_window(fake_server, "Noted.") as (app, pilot):
        screen = await send_large(pilot, app)
        question = str(app.screen.query_one(".question", Static).render())
        assert (
            "tokens: keep it whole, let Heedful summarize it when room is short, or send it once" in question
        )
        await pilot.press(*"ok")  # typing goes on: into the composer, after the document
        await pilot.press("enter")
        pasted = await sent_large(pilot, screen)
        assert screen.composer.text == "ok"
        await wait_for(pilot, lambda: ("consent", str(pasted), "keep", "answered by you") in user_actions())
        assert not not_keep(user_actions())


async def test_a_large_message_to_summarize_when_room_is_short_is_summarized_without_asking_again(
    fake_server: FakeOpenAIServer,
) -> None:
    async with small_window(fake_server, "Noted.") as (app, pilot):
        screen = await send_large(pilot, app)
        await pilot.press("alt+s")
        pasted = await sent_large(pilot, screen)
        summarized = ("consent", str(pasted), "summarize", "answered by you")
        await wait_for(pilot, lambda: summarized in user_actions())
        assert app.screen is screen, "answered when it was sent: not asked again"


# --- item 2: plain keys wherever the focus is ------------------------------------------------------

LETTERS = ("p", "r", "f", "i", "d", "y", "c", "e", "t", "j", "k", "m", "a", "u", "space", "q")


async def test_plain_keys_on_a_focused_message_are_typing(fake_server: FakeOpenAIServer) -> None:
    fake_server.reply = "Sure: `rm -rf build` then\n\n```sh\nmake\n```"
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "give me a command")
        screen = chat(app)
        message = screen.query(MessageView).first()
        message.focus()  # as a search hit, or a page scrolled into view, leaves it
        await pilot.press(*LETTERS)
        assert screen.composer.text == "prfidycetjkmau q"
        assert app.focused is screen.composer
        assert app.screen is screen and screen.editing is None
        await pilot.pause()
        assert not user_actions()
        assert screen.context is not None and not any(i.pinned for i in screen.context.items)


async def test_plain_keys_in_the_context_panel_are_typing(fake_server: FakeOpenAIServer) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "remember the staging password rotates")
        screen = chat(app)
        await pilot.press("tab")
        assert isinstance(app.focused, ContextList)
        await pilot.press(*"pfrc", "slash", "x")
        focused: object = app.focused
        assert screen.composer.text == "pfrc/x" and focused is screen.composer
        await pilot.pause()
        assert not user_actions()


async def test_plain_keys_on_the_memory_screen_are_typing() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.settled)
        await pilot.press(*"/memory", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen) and app.screen.is_mounted)
        await pilot.press(*"quote")
        assert isinstance(app.screen, MemoryScreen), "a plain letter closed the memory screen"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        assert screen.composer.text == "quote"


async def test_plain_keys_in_the_why_and_ledger_dialogs_are_typing(fake_server: FakeOpenAIServer) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "one thing")
        screen = chat(app)
        screen.query(MessageView).first().focus()
        await pilot.press("enter")  # Enter on a message: why is it where it is?
        await wait_for(pilot, lambda: isinstance(app.screen, InspectScreen))
        await pilot.press(*"prf")
        assert isinstance(app.screen, InspectScreen)
        await pilot.press("escape", "f6")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerScreen))
        await pilot.press(*"r/q")
        assert isinstance(app.screen, LedgerScreen)
        await pilot.press("escape")
        assert screen.composer.text == "prfr/q"
        await pilot.pause()
        assert not user_actions()


async def test_escape_comes_home_and_tab_cycles_composer_panel_conversation(
    fake_server: FakeOpenAIServer,
) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(120, 40)) as pilot:
        for n in range(4):
            await send(pilot, f"message {n}")
        screen = chat(app)
        assert app.focused is screen.composer
        await pilot.press("tab")
        assert isinstance(app.focused, ContextList)
        await pilot.press("tab")
        assert isinstance(app.focused, MessageView)
        await pilot.press("tab")
        assert app.focused is screen.composer, "three presses around, not one per message"
        await pilot.press("shift+tab")
        assert isinstance(app.focused, MessageView)
        await pilot.press("escape")
        assert app.focused is screen.composer
        await pilot.press("tab")
        await pilot.press("escape")
        assert app.focused is screen.composer, "Esc in the panel comes home"


async def test_alt_keys_act_on_a_focused_message(fake_server: FakeOpenAIServer) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "pin me")
        screen = chat(app)
        message = screen.query(MessageView).first()
        message.focus()
        await pilot.press("alt+p")
        await wait_for(
            pilot, lambda: ("operation", str(message.message.id), "pin", "pinned by you") in user_actions()
        )
        assert screen.composer.text == ""


def test_a_plain_key_in_the_config_is_refused_as_typing() -> None:
    from tui.keys import check_keymap

    keymap, problems = check_keymap({"pin": "p", "retry": "ctrl+t,/", "forget": "alt+x"})
    assert keymap == {"forget": "alt+x"}, "a plain key would act where the user meant to write"
    assert len(problems) == 2 and all("is typing, not an action key" in p for p in problems)


async def test_an_enter_ending_words_typed_through_the_dialog_sends_them_and_answers_once(
    fake_server: FakeOpenAIServer,
) -> None:
    """Words typed while the question is up go to the composer; the Enter that ends them sends them
    and takes the safe answer, once: the dialog closes and the chat screen stays."""
    async with small_window(fake_server) as (app, pilot):
        await until_heedful_asks(pilot, app)
        screen = chat(app)
        await pilot.press("f4")
        await asked(pilot, app, ConsentScreen)
        await pilot.press(*"and one more thing", "enter")
        await wait_for(pilot, lambda: app.screen is screen and screen.settled)
        assert screen in app.screen_stack and len(app.screen_stack) == 2
        assert stored_messages()[-2].content == "and one more thing"
        assert not not_keep(user_actions())
