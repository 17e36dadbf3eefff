"""Slash commands in the composer: reading a line, completing a command, and each command's effect."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Markdown

from engine.curation.items import ItemState
from tests.apphelpers import asked as asked_for
from tests.apphelpers import (
    chat,
    command_says,
    make_app,
    refreshed,
    send,
    stored_messages,
    toasts,
    type_command,
    views,
    wait_for,
)
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.help import HelpScreen
from tui.screens.tokens import TokensScreen
from tui.slash import (
    COMMANDS,
    Invocation,
    UnknownCommand,
    common_start,
    completions,
    message_number,
    read,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("hello", "hello"),
        ("/pin", Invocation(read("/pin").command, "")),  # type: ignore[union-attr]
        ("/pin #12", Invocation(read("/pin").command, "#12")),  # type: ignore[union-attr]
        ("  /FORGET 3 ", Invocation(read("/forget").command, "3")),  # type: ignore[union-attr]
        ("//etc/hosts is odd", "/etc/hosts is odd"),
        ("/pni 3", UnknownCommand("pni")),
    ],
)
def test_a_line_is_a_command_an_unknown_command_or_a_message(line: str, expected: object) -> None:
    assert read(line) == expected


def test_completion_offers_the_commands_a_line_could_start() -> None:
    assert completions("/") == list(COMMANDS)  # a bare slash offers every command, in the menu's order
    assert len({c.name for c in COMMANDS}) == len(COMMANDS) > 10
    assert [c.name for c in completions("/p")] == ["pin", "profile"]
    assert [c.name for c in completions("/t")] == ["tokens", "temperature"]
    assert [c.name for c in completions("/re")] == ["restore", "remember"]
    assert [c.name for c in completions("/res")] == ["restore"]
    assert completions("/pin ") == [] and completions("//p") == [] and completions("hello") == []
    assert common_start(["/pin", "/profile"]) == "/p" and common_start(["/new"]) == "/new"
    assert message_number("#12") == 12 and message_number("12") == 12 and message_number("x") is None


@contextlib.asynccontextmanager
async def said_hello(server: FakeOpenAIServer) -> AsyncIterator[tuple[HeedfulApp, Pilot[None]]]:
    """The app on ``server``'s model, run by Pilot, once a first message has had its reply."""
    app = make_app(base_url=server.base_url, model="fake-model")
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "hello")
        yield app, pilot


async def test_pin_unpin_forget_and_restore_by_number_and_by_default() -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "first message")
        await send(pilot, "second message")
        screen = chat(app)
        first_id = views(app)[0].message.id
        await type_command(pilot, app, f"/pin #{first_id}")
        await wait_for(pilot, lambda: (i := screen.context.item(first_id)) is not None and i.pinned)  # type: ignore[union-attr]
        assert screen.composer.text == ""  # a command is not left in the composer, nor sent
        assert len(stored_messages()) == 4
        await command_says(pilot, app, f"/pin {first_id}", "already pinned")
        await type_command(pilot, app, f"/unpin #{first_id}")
        await wait_for(pilot, lambda: not screen.context.item(first_id).pinned)  # type: ignore[union-attr]
        last_id = views(app)[-1].message.id
        await type_command(pilot, app, "/forget")  # no number: the last message
        await wait_for(pilot, lambda: screen.context.item(last_id).state is ItemState.PRUNED)  # type: ignore[union-attr]
        await type_command(pilot, app, f"/restore #{last_id}")
        await wait_for(pilot, lambda: screen.context.item(last_id).state is ItemState.ACTIVE)  # type: ignore[union-attr]
        await command_says(pilot, app, "/forget #999", "No message #999")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("/keep the schema", "nothing to keep yet"),
        ("/standing always use metric units", "start the conversation first"),
    ],
)
async def test_keep_and_standing_before_a_conversation_say_there_is_nothing_yet(line: str, said: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await command_says(pilot, app, line, said)
        assert chat(app).composer.text == line  # refused: left as typed


async def test_an_unknown_command_is_not_sent_and_a_double_slash_is() -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await command_says(pilot, app, "/frobnicate now", "no command /frobnicate")
        assert chat(app).composer.text == "/frobnicate now"  # kept, to fix the typo
        assert stored_messages() == []
        await type_command(pilot, app, "//usr/bin is a directory")
        await wait_for(pilot, lambda: len(views(app)) == 2 and chat(app).settled)
    assert [m.content for m in stored_messages() if m.role == "user"] == ["/usr/bin is a directory"]


async def test_tab_completes_a_command_and_the_hint_lists_matches() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        screen = chat(app)
        screen.composer.focus()
        await pilot.press("/", "r")
        await wait_for(pilot, lambda: "/restore" in str(screen.draft_hint.render()))
        assert "/remember" in str(screen.draft_hint.render())
        await pilot.press("tab")
        assert screen.composer.text == "/re"  # as far as the matches agree
        await pilot.press("s", "tab")
        assert screen.composer.text == "/restore "
        assert app.focused is screen.composer  # Tab completed instead of moving focus


async def test_the_slash_menu_shows_each_command_with_a_one_line_description() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = chat(app)
        screen.composer.focus()
        await pilot.press("/")
        await wait_for(pilot, lambda: "/help" in str(screen.draft_hint.render()))
        hint = screen.draft_hint
        await refreshed(pilot, hint)  # laid out at its width
        lines = [line.rstrip() for line in str(hint.render()).splitlines()]
        assert all(len(line) <= hint.size.width for line in lines)  # one line each, never wrapped
        for command in COMMANDS:  # every command, its description beside it on its own line
            (line,) = [line for line in lines if line.startswith(f"/{command.name} ")]
            assert command.help[:12] in line
        await pilot.press("p")
        await wait_for(pilot, lambda: "/help" not in str(screen.draft_hint.render()))
        lines = str(screen.draft_hint.render()).splitlines()
        assert [line.split()[0] for line in lines if line.startswith("/")] == ["/pin", "/profile"]


async def test_tokens_shows_each_part_of_the_next_request() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "a question about tokens")
        context = chat(app).context
        await type_command(pilot, app, "/tokens")
        await wait_for(
            pilot, lambda: isinstance(app.screen, TokensScreen) and app.screen.is_mounted
        )  # composed
        table = app.screen.query_one(DataTable)
        assert context is not None and table.row_count == len(context.messages)
        counts = [int(str(table.get_row_at(r)[0]).replace(",", "")) for r in range(table.row_count)]
        assert counts == sorted((m.tokens for m in context.messages), reverse=True)


async def test_tokens_lists_what_is_left_out_with_reasons_your_messages_first() -> None:
    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, "first question about apples")
        await send(pilot, "second question about pears")
        screen = chat(app)
        first_user, first_reply = (v.message.id for v in views(app)[:2])
        await type_command(pilot, app, f"/forget #{first_reply}")
        await wait_for(pilot, lambda: screen.context.item(first_reply).state is ItemState.PRUNED)  # type: ignore[union-attr]
        await type_command(pilot, app, f"/forget #{first_user}")
        await wait_for(pilot, lambda: screen.context.item(first_user).state is ItemState.PRUNED)  # type: ignore[union-attr]
        await type_command(pilot, app, "/tokens")
        await wait_for(
            pilot, lambda: isinstance(app.screen, TokensScreen) and app.screen.is_mounted
        )  # composed
        left = app.screen.query_one("#tokens-left-out", DataTable)
        rows = [[str(cell) for cell in left.get_row_at(r)] for r in range(left.row_count)]
        assert [row[1] for row in rows] == [f"you #{first_user}", f"assistant #{first_reply}"]
        assert all("taken out by you" in row[2] for row in rows), rows  # each with its reason
        assert "first question about apples" in rows[0][3]
        sent = app.screen.query_one("#tokens-table", DataTable)
        assert sent.row_count == len(screen.context.messages)  # type: ignore[union-attr]


async def test_help_lists_the_slash_commands_and_new_starts_a_session() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        await type_command(pilot, app, "/help")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))

        def listing() -> str:
            return "\n".join(m.source for m in app.screen.query(Markdown).results(Markdown))

        await wait_for(pilot, lambda: "`/attach FILE`" in listing() and "`/tokens`" in listing())
        await pilot.press("escape")
        await type_command(pilot, app, "/new")
        await wait_for(pilot, lambda: chat(app).session is None and not views(app))


async def test_compact_summarizes_older_replies_and_asks_about_the_users_messages() -> None:
    from tui.screens.consent import ConsentScreen

    app = make_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        for text in ("The build fails on step nine.", "We decided to pin numpy to 1.26.", "ok", "and now?"):
            await send(pilot, text)
        screen = chat(app)
        old_reply, old_question = views(app)[1].message.id, views(app)[0].message.id
        recent_reply = views(app)[-1].message.id
        await type_command(pilot, app, "/compact")
        await asked_for(pilot, app, ConsentScreen)
        asked = {item.item_id for item in app.screen.request.items}  # type: ignore[attr-defined]
        assert old_question in asked and old_reply not in asked
        # Said as it is: the older replies are summarized, and these short messages saved nothing.
        await wait_for(pilot, lambda: any(t.startswith("Summarized 2 older messages: ") for t in toasts(app)))
        assert not any("0 tokens smaller" in t for t in toasts(app)), toasts(app)
        # The model's older reply is summarized at once; the recent turns are not touched.
        assert screen.context is not None
        assert screen.context.item(old_reply).state is ItemState.SUMMARIZED  # type: ignore[union-attr]
        assert screen.context.item(recent_reply).state is ItemState.ACTIVE  # type: ignore[union-attr]
        assert screen.context.item(old_question).state is ItemState.ACTIVE  # type: ignore[union-attr]
        await pilot.press("alt+s")  # summarize all
        await wait_for(pilot, lambda: screen.context.item(old_question).state is ItemState.SUMMARIZED)  # type: ignore[union-attr]
        # Again, with nothing left to compact: said so, not "0 tokens smaller".
        await type_command(pilot, app, "/compact")
        await wait_for(pilot, lambda: "Nothing older to compact." in toasts(app))


async def test_system_sets_this_sessions_prompt_which_is_sent_and_kept(fake_server: FakeOpenAIServer) -> None:
    async with said_hello(fake_server) as (app, pilot):
        await command_says(pilot, app, "/system You answer in French.", "its own system prompt")
        await send(pilot, "and now?")
        assert fake_server.requests[-1]["body"]["messages"][0] == {
            "role": "system",
            "content": "You answer in French.",
        }
    again = make_app(base_url=fake_server.base_url, model="fake-model")  # a restart: it is stored
    async with again.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: chat(again).session is not None)
        await command_says(pilot, again, "/system", "French", "own")
        await type_command(pilot, again, "/system default")
        await send(pilot, "back to normal?")
        assert fake_server.requests[-1]["body"]["messages"][0]["content"] != "You answer in French."


async def test_profile_changes_this_sessions_budget() -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "hello")
        screen = chat(app)
        balanced = screen.context.budget  # type: ignore[union-attr]
        await type_command(pilot, app, "/profile cost")
        await wait_for(pilot, lambda: screen.context is not None and screen.context.budget < balanced)
        await command_says(pilot, app, "/profile lavish", "no profile 'lavish'")


async def test_model_switches_this_sessions_model_and_it_is_kept(fake_server: FakeOpenAIServer) -> None:
    async with said_hello(fake_server) as (app, pilot):
        await command_says(pilot, app, "/model fake-model-large", "the model fake-model-large")
        await send(pilot, "bigger brain please")
        assert fake_server.requests[-1]["body"]["model"] == "fake-model-large"
        assert app.services.model_name == "fake-model-large"
    again = make_app(base_url=fake_server.base_url, model="fake-model")  # a restart
    async with again.run_test(notifications=True) as pilot:
        await wait_for(
            pilot, lambda: chat(again).session is not None and again.services.model_name == "fake-model-large"
        )
        await type_command(pilot, again, "/model default")
        await send(pilot, "back to the default")
        assert fake_server.requests[-1]["body"]["model"] == "fake-model"
        await pilot.press("ctrl+n")  # a new session starts on the default too
        await wait_for(pilot, lambda: chat(again).session is None)
        assert again.services.model_name == "fake-model"


async def test_temperature_is_sent_for_this_session_only_when_set(fake_server: FakeOpenAIServer) -> None:
    async with said_hello(fake_server) as (app, pilot):
        assert "temperature" not in fake_server.requests[-1]["body"]  # the server's default
        await command_says(pilot, app, "/temperature 0.2", "temperature 0.2")
        await send(pilot, "precise now")
        assert fake_server.requests[-1]["body"]["temperature"] == 0.2
        await command_says(pilot, app, "/temperature hot", "from 0 to 2")
        await type_command(pilot, app, "/temperature default")
        await send(pilot, "as usual")
        assert "temperature" not in fake_server.requests[-1]["body"]


def test_the_chat_screen_carries_out_every_command_help_lists() -> None:
    """Each command /help lists (and the composer completes) is one the chat screen knows: a
    missing one would fail as the user sends it."""
    from typing import Any, cast

    from tui.screens.chat_commands import SlashCommands

    nothing = cast(Any, None)
    commands = SlashCommands(nothing, context=nothing, memory=nothing, models=nothing)
    assert {command.name for command in COMMANDS} <= commands.names
