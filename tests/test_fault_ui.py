"""What the user sees when the network misbehaves: a countdown to the automatic retry, a cut-off
reply continued in place, and a too-long request sent again with what was left out named."""

from __future__ import annotations

from textual.pilot import Pilot

from engine.chat import MessageStatus
from tests.apphelpers import chat, make_app, say, send, stored_messages, toasts, views, wait_for, write_config
from tests.fake_openai import FakeOpenAIServer
from tests.test_app import body, text_of
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen


def rate_limited(server: FakeOpenAIServer, *, retries: int, retry_after_ms: int) -> HeedfulApp:
    """The app on ``server``, whose first answer is a 429 asking to wait ``retry_after_ms``."""
    write_config(f"max_retries = {retries}\n")
    server.faults.append(f"429:{retry_after_ms}")
    return make_app(base_url=server.base_url, model="fake-model")


async def until_waiting(pilot: Pilot[None], app: HeedfulApp, text: str) -> ChatScreen:
    """Send ``text`` and wait for its reply's countdown to a retry; the chat screen."""
    screen = chat(app)
    screen.composer.insert(text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: len(views(app)) == 2 and views(app)[1].has_class("-waiting"))
    return screen


async def test_a_rate_limit_shows_a_countdown_then_the_reply(fake_server: FakeOpenAIServer) -> None:
    app = rate_limited(fake_server, retries=1, retry_after_ms=3000)
    async with app.run_test() as pilot:
        screen = await until_waiting(pilot, app, "are you there?")
        reply = views(app)[1]
        waiting = text_of(reply.query_one(".waiting"))
        assert "limiting requests" in waiting and "retry 1 of 1" in waiting
        assert "in 3 s" in waiting or "in 2 s" in waiting
        await wait_for(pilot, lambda: "in 1 s" in text_of(reply.query_one(".waiting")), 5)
        await wait_for(pilot, lambda: screen.settled, 10)
        assert body(reply) == "Echo: are you there?"
        assert not reply.has_class("-waiting") and not reply.has_class("-problem")
    assert len(fake_server.requests) == 2


async def test_escape_during_the_countdown_stops_and_keeps_the_message(fake_server: FakeOpenAIServer) -> None:
    app = rate_limited(fake_server, retries=2, retry_after_ms=60000)
    async with app.run_test() as pilot:
        screen = await until_waiting(pilot, app, "wait for me")
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.settled)
        await wait_for(pilot, lambda: views(app)[1].message.status == MessageStatus.FAILED)
        assert not views(app)[1].has_class("-waiting")
    assert [m.content for m in stored_messages() if m.role == "user"] == ["wait for me"]
    assert len(fake_server.requests) == 1


async def test_a_cut_off_reply_is_continued_in_place_with_ctrl_g(fake_server: FakeOpenAIServer) -> None:
    write_config("max_retries = 0\n")
    fake_server.reply = "alpha beta gamma delta epsilon zeta eta theta"
    fake_server.faults.append("cutoff")
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "letters")
        cut = views(app)[1]
        await wait_for(pilot, lambda: cut.message.status == MessageStatus.INTERRUPTED)
        partial = cut.message.content
        assert partial and "Ctrl+G continues" in text_of(cut.query_one(".problem"))
        await wait_for(pilot, lambda: any("Ctrl+G continues" in t for t in toasts(app)))
        fake_server.reply = " iota kappa"
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: cut.message.status == MessageStatus.COMPLETE and chat(app).settled)
        assert len(views(app)) == 2  # the same message grew; no new one
        assert body(cut) == partial + " iota kappa"
        assert not cut.has_class("-problem")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: any("nothing to continue" in t for t in toasts(app)))
    replies = [m for m in stored_messages() if m.role == "assistant"]
    assert [(m.content, m.status) for m in replies] == [(partial + " iota kappa", MessageStatus.COMPLETE)]


async def test_too_long_for_the_model_is_sent_again_and_the_user_told_what_was_left_out(
    fake_server: FakeOpenAIServer,
) -> None:
    write_config("max_retries = 0\n")
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        for topic in ("rivers", "mountains", "glaciers", "deserts"):
            text = f"Tell me about {topic}. " + " ".join(f"{topic}{n}" for n in range(300))
            await say(pilot, app, text, keep=True)
        fake_server.enforced_window = 1500
        await say(pilot, app, "and volcanoes?", keep=True)
        assert body(views(app)[-1]) == "Echo: and volcanoes?"
        await wait_for(pilot, lambda: any("too long" in t for t in toasts(app)))
        notice = next(t for t in toasts(app) if "too long" in t)
        assert "1,500" in notice and "without" in notice
        shown = chat(app).context
        assert shown is not None and shown.window == 1500


async def test_a_store_that_fails_under_a_streaming_reply_is_said_and_the_reply_closed(
    fake_server: FakeOpenAIServer,
) -> None:
    from engine.errors import StoreError

    fake_server.reply = "word " * 200
    fake_server.chunk_delay = 0.01
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(notifications=True) as pilot:
        store = app.services.store

        def disk_full(*args: object, **kwargs: object) -> object:
            raise StoreError("The disk holding /data/heedful.db is full.")

        screen = chat(app)
        screen.composer.insert("hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and "word" in body(views(app)[1]))
        store.update_message = disk_full  # type: ignore[method-assign,assignment]  # the disk fills up now
        await wait_for(pilot, lambda: screen.settled)
        reply = views(app)[1]
        assert reply.message.status == MessageStatus.INTERRUPTED
        assert "disk" in text_of(reply.query_one(".problem"))
        await wait_for(pilot, lambda: any("is full" in t for t in toasts(app)))
        assert app.is_running


async def test_escape_cancels_a_server_that_has_not_started_answering(fake_server: FakeOpenAIServer) -> None:
    import time

    fake_server.faults.append("slow_headers:30")
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test() as pilot:
        screen = chat(app)
        screen.composer.insert("anyone home?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and fake_server.requests)
        started = time.monotonic()
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.settled)
        assert time.monotonic() - started < 5  # not the 30 s the server would take, nor the read timeout
        await wait_for(pilot, lambda: views(app)[1].message.status == MessageStatus.FAILED)
    assert [m.content for m in stored_messages() if m.role == "user"] == ["anyone home?"]
