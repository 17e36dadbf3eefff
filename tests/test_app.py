"""The app, driven with Pilot: offline first run, streaming, stop, retry, sessions, persistence."""

from __future__ import annotations

import itertools

import pytest
from textual.widgets import Markdown

from engine.chat import MessageStatus
from engine.curation.context_view import ContextView
from sessions import paths
from tests.apphelpers import (
    chat,
    make_app,
    palette_highlights,
    run_from_palette,
    say,
    send,
    stored_messages,
    toasts,
    views,
    wait_for,
    write_config,
)
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.dialogs import ConfirmScreen
from tui.screens.sessions import SessionsScreen
from tui.widgets.composer import Composer
from tui.widgets.header_bar import HeaderBar


def text_of(widget: object) -> str:
    """The plain text a Static, Markdown or TextArea currently shows."""
    from textual.widgets import Static, TextArea

    if isinstance(widget, Markdown):
        return widget.source
    if isinstance(widget, TextArea):
        return widget.text
    assert isinstance(widget, Static)
    return str(widget.render())


def welcome(app: HeedfulApp) -> str:
    """The welcome text shown in the message list, or "" if there is none."""
    return "".join(text_of(w) for w in chat(app).message_list.query(".welcome"))


def body(view: object) -> str:
    from tui.widgets.message_view import MessageView

    assert isinstance(view, MessageView)
    return text_of(view.query_one(".body"))


async def test_first_run_offline_hello_gets_a_labelled_offline_reply() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        header = chat(app).query_one(HeaderBar)
        assert "offline" in text_of(header.query_one("#header-model"))
        # The (empty) session opens in a worker: the welcome comes with it.
        await wait_for(pilot, lambda: "Welcome to Heedful." in welcome(app))
        await send(pilot, "hello")
        assert welcome(app) == ""  # the conversation takes its place
        user, reply = views(app)
        assert body(user) == "hello"
        assert "Offline model" in body(reply)
        assert "> hello" in body(reply)
        assert reply.message.status == MessageStatus.COMPLETE
        assert text_of(header.query_one("#header-title")) == "hello"
        assert chat(app).query_one(Composer).text == ""


async def test_conversation_is_there_after_a_restart() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await send(pilot, "remember me")
    again = make_app()
    async with again.run_test() as pilot:
        # A Markdown body gets its source once mounted: wait for that too, not only the views.
        await wait_for(pilot, lambda: len(views(again)) == 2 and body(views(again)[1]))
        assert body(views(again)[0]) == "remember me"
        assert "Offline model" in body(views(again)[1])


async def test_reply_streams_from_an_openai_compatible_server(fake_server: FakeOpenAIServer) -> None:
    fake_server.reply = "Streaming works " * 20
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test() as pilot:
        header = chat(app).query_one(HeaderBar)
        # The first frame names the model; the provider it talks to, once the engine has loaded.
        where = f"fake-model on {fake_server.host}:{fake_server.port}"
        await wait_for(pilot, lambda: text_of(header.query_one("#header-model")) == where)
        await send(pilot, "hi")
        reply = views(app)[1]
        assert body(reply).strip() == ("Streaming works " * 20).strip()
        request = fake_server.requests[-1]["body"]
        assert request["stream"] is True
        assert request["messages"][-1] == {"role": "user", "content": "hi"}


async def test_the_user_message_is_stored_before_the_request_is_sent(fake_server: FakeOpenAIServer) -> None:
    seen_in_store: list[list[str]] = []
    fake_server.on_request = lambda request: seen_in_store.append(
        [m.content for m in stored_messages() if m.role == "user"]
    )
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test() as pilot:
        await send(pilot, "saved first")
    assert seen_in_store == [["saved first"]]


async def test_escape_stops_a_reply_and_keeps_what_arrived(fake_server: FakeOpenAIServer) -> None:
    fake_server.reply = "word " * 400
    fake_server.chunk_delay = 0.02
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test() as pilot:
        composer = chat(app).query_one(Composer)
        await pilot.press("g", "o", "enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and "word" in body(views(app)[1]))
        await pilot.press("escape")
        await wait_for(pilot, lambda: chat(app).settled)
        reply = views(app)[1]
        await wait_for(pilot, lambda: reply.message.status == MessageStatus.INTERRUPTED)
        assert reply.has_class("-problem")
        assert composer.text == ""
    stored = [m for m in stored_messages() if m.role == "assistant"]
    assert len(stored) == 1
    assert stored[0].status == MessageStatus.INTERRUPTED
    assert stored[0].content.startswith("word ")
    assert len(stored[0].content) < len("word " * 400)


async def test_retry_replaces_a_failed_reply(fake_server: FakeOpenAIServer) -> None:
    write_config("max_retries = 0\n")
    fake_server.faults.append("500")
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test() as pilot:
        await send(pilot, "try me")
        failed = views(app)[1]
        assert failed.message.status == MessageStatus.FAILED
        assert failed.has_class("-problem")
        await pilot.press("ctrl+r")
        await wait_for(
            pilot, lambda: len(views(app)) == 2 and views(app)[1] is not failed and chat(app).settled
        )
        assert body(views(app)[1]) == "Echo: try me"
    statuses = [m.status for m in stored_messages() if m.role == "assistant"]
    assert statuses == [MessageStatus.SUPERSEDED, MessageStatus.COMPLETE]


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("401", "API key"),
        ("429", "rate"),
        ("500", "server"),
        ("context_length", "too long"),
        ("slow_first_token:3", "did not"),
        ("cutoff", "partial reply is kept"),
    ],
)
async def test_every_fault_is_explained_on_screen_and_retry_recovers(
    fake_server: FakeOpenAIServer, fault: str, said: str
) -> None:
    write_config("max_retries = 0\n[timeouts]\nread = 0.5\n")
    # A context_length answer is sent again once, tighter, by itself: it must fail twice to reach the user.
    fake_server.faults.extend([fault, fault] if fault == "context_length" else [fault])
    app = make_app(base_url=fake_server.base_url, model="fake-model", env={"OPENAI_API_KEY": "k"})
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "keep this safe")
        failed = views(app)[1]
        assert failed.has_class("-problem")
        assert "Ctrl+R" in text_of(failed.query_one(".problem"))
        await wait_for(pilot, lambda: any(said.lower() in t.lower() for t in toasts(app)))
        assert [m.content for m in stored_messages() if m.role == "user"] == ["keep this safe"]
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: views(app)[-1] is not failed and chat(app).settled)
        assert body(views(app)[-1]) == "Echo: keep this safe"


async def test_an_error_of_heedfuls_own_mid_reply_is_reported_and_the_reply_keeps_what_arrived(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.reply = "word " * 60
    fake_server.chunk_delay = 0.01
    app = make_app(base_url=fake_server.base_url, model="fake-model", env={"OPENAI_API_KEY": "k"})
    async with app.run_test(notifications=True) as pilot:
        turns = chat(app).services.turns
        clock, reads = turns._clock, itertools.count()

        def broken() -> float:
            if next(reads) == 10:  # a few words in
                raise RuntimeError("the clock broke")  # as a bug in a step of the reply would
            return clock()

        turns._clock = broken
        await send(pilot, "keep this safe")
        await wait_for(pilot, lambda: any("the clock broke" in t for t in toasts(app)))
        user, reply = stored_messages()
        assert user.content == "keep this safe" and reply.status == MessageStatus.INTERRUPTED
        # On screen as stored: what arrived, ended, with why and what to do; not still waiting.
        failed = views(app)[1]
        assert body(failed) == reply.content and reply.content.startswith("word word")
        assert failed.has_class("-problem")
        problem = text_of(failed.query_one(".problem"))
        assert "the clock broke" in problem and "Ctrl+R" in problem
        turns._clock = clock
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: views(app)[-1] is not failed and chat(app).settled)
        assert body(views(app)[-1]) == "word " * 60


async def test_a_plan_view_that_fails_is_said_and_the_reply_completes(fake_server: FakeOpenAIServer) -> None:
    fake_server.reply = "word " * 60
    fake_server.chunk_delay = 0.01  # still streaming when the view of the plan is due
    app = make_app(base_url=fake_server.base_url, model="fake-model", env={"OPENAI_API_KEY": "k"})
    async with app.run_test(notifications=True) as pilot:
        turns = chat(app).services.turns

        def broken(*_: object) -> ContextView:
            raise RuntimeError("the view broke")  # as a bug in it would

        turns._view = broken  # type: ignore[method-assign,assignment]
        await send(pilot, "keep this safe")
        await wait_for(pilot, lambda: chat(app).settled and len(views(app)) == 2)
        shown = [t for t in toasts(app) if "the view broke" in t]
        assert len(shown) == 1 and "context panel could not show" in shown[0]
        user, reply = stored_messages()
        assert user.content == "keep this safe" and reply.status == MessageStatus.COMPLETE
        assert reply.content == "word " * 60
        assert body(views(app)[1]) == "word " * 60 and not views(app)[1].has_class("-problem")
        # The panel caught up: it shows the next request, with the reply in it.
        await wait_for(pilot, lambda: (v := chat(app).context) is not None and v.item(reply.id) is not None)


async def test_new_session_starts_empty_and_sessions_picker_switches_back() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "first session")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: views(app) == [] and "Welcome to Heedful." in welcome(app))
        await send(pilot, "second session")
        assert welcome(app) == ""
        await pilot.press("ctrl+o")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 2
        )
        await pilot.press("down", "enter")  # newest first: the second entry is the first session
        await wait_for(pilot, lambda: len(views(app)) == 2 and body(views(app)[0]) == "first session")
        opened = chat(app).session
        assert opened is not None and opened.title == "first session"


async def test_sessions_can_be_renamed_and_deleted_with_confirmation() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "keep me")
        await pilot.press("ctrl+n")
        await send(pilot, "delete me")
        await pilot.press("ctrl+o")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 2
        )
        picker = app.screen
        assert isinstance(picker, SessionsScreen)
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # "cancel" keeps it
        await pilot.pause()
        assert len(picker.sessions) == 2
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: len(picker.sessions) == 1)
        await pilot.press("alt+r")
        await pilot.press(*"renamed", "enter")  # the old title is selected, so typing replaces it
        await wait_for(pilot, lambda: picker.sessions[0].title == "renamed")
    titles = {m.content for m in stored_messages()}
    assert "delete me" not in titles and "keep me" in titles


async def test_malformed_config_is_reported_and_the_app_still_works() -> None:
    write_config('model = "unterminated\n')
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: any("line 1, column" in t for t in toasts(app)))
        await send(pilot, "still works")
        assert "Offline model" in body(views(app)[1])


async def test_the_chosen_theme_is_remembered() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        app.theme = "heedful-light"
        await wait_for(
            pilot, lambda: not [w for w in app.workers if w.group == "state" and not w.is_finished]
        )
    again = make_app()
    async with again.run_test():
        assert again.theme == "heedful-light"


async def test_copy_last_reply() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await send(pilot, "copy this")
        await pilot.press("alt+c")
        assert app.clipboard == views(app)[1].message.content
        assert "Offline model" in app.clipboard


async def test_every_chat_action_is_in_the_command_palette() -> None:

    from tui.screens.chat import ChatScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        commands = {command.title for command in app.get_system_commands(chat(app))}
        for binding in ChatScreen.BINDINGS:
            assert binding.description in commands  # type: ignore[union-attr]
        for action in ("Pin/unpin", "Restore", "Forget", "Filter"):
            assert f"{action} (context panel)" in commands
        await run_from_palette(pilot, app, "Sessions")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))


async def test_the_theme_can_be_switched_from_the_palette() -> None:
    from textual.command import CommandPalette

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.theme == "heedful-dark"
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"theme")
        await wait_for(pilot, lambda: palette_highlights(app, "Theme"))
        commands = app.screen
        await pilot.press("enter")
        # The theme command opens a palette of its own, listing the themes.
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen is not commands)
        await pilot.press(*"heedful-light")
        await wait_for(pilot, lambda: palette_highlights(app, "heedful-light"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "heedful-light")


async def test_the_context_panel_shows_what_was_forgotten(fake_server: FakeOpenAIServer) -> None:
    write_config(
        'model = "fake/fake-model"\nmax_retries = 0\n'
        f'[providers.fake]\nbase_url = "{fake_server.base_url}"\nmodels = {{ "fake-model" = 700 }}\n'
    )
    fake_server.reply = "Noted, thanks. " * 25
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for n in range(6):
            text = f"Turn {n}: the billing-api deploy fails with ConnectionRefusedError again."
            await say(pilot, app, text, keep=True)
        view = chat(app).context
        assert view is not None
        assert view.tokens <= view.budget == 490
        forgotten = [i for i in view.items if i.state.value in ("pruned", "summarized")]
        assert forgotten and all(i.role == "assistant" for i in forgotten)
        rows = chat(app).context_panel.rows
        shown = [str(rows.get_option_at_index(n).prompt) for n in range(rows.option_count)]
        assert any(f"#{forgotten[-1].id} " in row for row in shown)
        start = shown.index(next(row for row in shown if row.startswith("Sent in full")))
        end = next(n for n, row in enumerate(shown) if n > start and row.startswith(("Sent as", "Not sent")))
        assert any("ConnectionRefusedError" in row for row in shown[start:end])
        app.save_screenshot(str(paths.data_dir() / "panel.svg"))
