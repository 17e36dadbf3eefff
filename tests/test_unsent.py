"""Quitting with a half-written message: it is back in the composer when the app opens again,
once, with a note saying so; pastes come back whole."""

from __future__ import annotations

from textual import events

from tests.apphelpers import chat, make_app, stored_messages, toasts, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.widgets.composer import PASTE_INLINE_CHARS


def told_it_is_back(app: HeedfulApp) -> bool:
    return any("back in the composer" in " ".join(t.split()) for t in toasts(app))


async def test_a_message_being_written_at_quit_is_back_in_the_composer_when_reopened() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        chat(app).composer.focus()
        await pilot.press(*"half a thought")
        await wait_for(pilot, lambda: chat(app).composer.text == "half a thought")
    reopened = make_app()
    async with reopened.run_test(notifications=True) as pilot:
        composer = chat(reopened).composer
        await wait_for(pilot, lambda: composer.text == "half a thought")
        await wait_for(pilot, lambda: told_it_is_back(reopened))
        composer.clear()  # the user decides against it
    again = make_app()
    async with again.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: chat(again).context is not None)
        await pilot.pause()
        assert chat(again).composer.text == "", "a text cleared before quitting came back"
        assert not told_it_is_back(again)


async def test_a_large_paste_left_unsent_comes_back_whole_behind_its_placeholder() -> None:
    pasted = "".join(f"line {n} of a log\n" for n in range(PASTE_INLINE_CHARS // 10))
    app = make_app()
    async with app.run_test() as pilot:
        composer = chat(app).composer
        composer.focus()
        await pilot.press(*"see ")
        app.post_message(events.Paste(pasted))
        await wait_for(pilot, lambda: composer.text.startswith("see [Pasted text #1"))
    reopened = make_app()
    async with reopened.run_test() as pilot:
        composer = chat(reopened).composer
        await wait_for(pilot, lambda: composer.text.startswith("see [Pasted text #1"))
        assert composer.message == "see " + pasted


async def test_quitting_while_a_message_is_sent_keeps_only_what_was_typed_after_it(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.faults.append("slow_first_token:10")  # the reply is still awaited at quit
    app = make_app(base_url=fake_server.base_url, model="fake-model", env={"OPENAI_API_KEY": "k"})
    async with app.run_test() as pilot:
        composer = chat(app).composer
        composer.focus()
        await pilot.press(*"first", "enter")
        await wait_for(pilot, lambda: chat(app).busy)
        await pilot.press(*"second")
        await wait_for(pilot, lambda: composer.text.endswith("second"))
    reopened = make_app(base_url=fake_server.base_url, model="fake-model", env={"OPENAI_API_KEY": "k"})
    async with reopened.run_test() as pilot:
        composer = chat(reopened).composer
        await wait_for(pilot, lambda: composer.text != "")
        assert composer.text == "second"
    assert [m.content for m in stored_messages() if m.role == "user"] == ["first"]
