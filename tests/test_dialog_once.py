"""Every dialog over the chat is answered once: a second answer in the same frame (an Enter seen by
a button and by a binding) must not close the chat screen under it."""

from __future__ import annotations

from tests.apphelpers import chat, make_app, refreshed, wait_for
from tui.screens.chat import ChatScreen
from tui.screens.dialogs import ConfirmScreen
from tui.screens.large_message import LargeMessageScreen


async def test_a_dialog_answered_twice_in_one_frame_closes_once_and_keeps_the_chat() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        answers: list[bool | None] = []
        dialog = ConfirmScreen("Delete this session?")
        app.push_screen(dialog, answers.append)
        await wait_for(pilot, lambda: app.screen is dialog and dialog.focused is not None)  # drawn

        dialog.dismiss(True)
        dialog.dismiss(False)
        await wait_for(pilot, lambda: answers != [])
        await pilot.pause()
        assert answers == [True]
        assert app.screen is chat(app)


async def test_a_dialog_under_another_is_not_closed_by_its_own_answer() -> None:
    """An answer given to a dialog while another screen is over it would pop that one instead."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        under = LargeMessageScreen("This message is 9,000 tokens.")
        app.push_screen(under)
        over = ConfirmScreen("Really?")
        app.push_screen(over)
        await wait_for(pilot, lambda: app.screen is over and over.focused is not None)

        under.dismiss("keep")
        await pilot.pause()
        assert app.screen is over
        assert app.screen_stack[-2:] == [under, over]


async def test_a_dialog_answered_before_it_was_mounted_closes_without_an_error() -> None:
    """An Enter typed as a question opens can answer it before its parts are mounted: focusing the
    safe answer then found nothing, and the app stopped with an error."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        answers: list[object] = []
        confirm = ConfirmScreen("Delete this session?")
        app.push_screen(confirm, answers.append)
        confirm.dismiss(None)  # in the same frame: before it is composed and mounted
        await wait_for(pilot, lambda: len(answers) == 1)
        large = LargeMessageScreen("A large message.")
        app.push_screen(large, answers.append)
        large.dismiss(None)
        await wait_for(pilot, lambda: len(answers) == 2)
        await refreshed(pilot)
        assert app.screen is chat(app) and app.return_code is None
