"""Actions on one message in the chat: edit and resend, delete, copy it or its code block."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.pilot import Pilot

from engine.chat import MessageStatus
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, send, stored_messages, toasts, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.test_app import body
from tui.app import HeedfulApp
from tui.clipboard import code_blocks
from tui.screens.dialogs import ConfirmScreen


def ledger_actions() -> list[tuple[str, str, str]]:
    store = open_store(paths.database_path()).store
    try:
        (session,) = store.list_sessions()
        return [
            (e.target, e.action, e.reason) for e in store.ledger(session.id) if e.action in ("edit", "delete")
        ]
    finally:
        store.close()


async def press_on(pilot: Pilot[None], app: HeedfulApp, index: int, key: str) -> None:
    """Focuses the message at ``index`` (of those on screen) and presses ``key`` there."""
    views(app)[index].focus()
    await pilot.press(key)


async def test_editing_a_message_resends_it_and_keeps_the_old_branch(fake_server: FakeOpenAIServer) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "one")
        await send(pilot, "two")
        await press_on(pilot, app, 0, "alt+i")
        screen = chat(app)
        assert screen.composer.text == "one" and app.focused is screen.composer
        assert "Editing #" in str(screen.draft_hint.render())
        screen.composer.text = "uno"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: screen.settled and [body(v) for v in views(app)] == ["uno", "Echo: uno"]
        )
    stored = stored_messages()
    assert [(m.content, m.status) for m in stored] == [
        ("one", MessageStatus.SUPERSEDED),
        ("Echo: one", MessageStatus.SUPERSEDED),
        ("two", MessageStatus.SUPERSEDED),
        ("Echo: two", MessageStatus.SUPERSEDED),
        ("uno", MessageStatus.COMPLETE),
        ("Echo: uno", MessageStatus.COMPLETE),
    ]
    # The model is sent the new branch only; the ledger says what the edit replaced.
    assert [m["content"] for m in fake_server.requests[-1]["body"]["messages"] if m["role"] != "system"] == [
        "uno"
    ]
    assert [(target, action) for target, action, _ in ledger_actions()] == [
        (str(m.id), "edit") for m in stored[:4]
    ]


async def test_escape_cancels_an_edit_and_only_user_messages_are_editable() -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "keep me")
        await press_on(pilot, app, 1, "alt+i")
        await wait_for(pilot, lambda: any("Only your own messages" in t for t in toasts(app)))
        await press_on(pilot, app, 0, "alt+i")
        assert chat(app).composer.text == "keep me"
        await pilot.press("escape")
        assert chat(app).composer.text == "" and chat(app).editing is None
        await send(pilot, "next")
    assert [m.status for m in stored_messages()] == [MessageStatus.COMPLETE] * 4


async def test_deleting_a_message_asks_hides_it_logs_it_and_it_is_not_sent(
    fake_server: FakeOpenAIServer,
) -> None:
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "secret plan")
        await send(pilot, "hello")
        await press_on(pilot, app, 0, "alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: len(views(app)) == 3)
        await send(pilot, "and now?")
    sent = [m["content"] for m in fake_server.requests[-1]["body"]["messages"]]
    assert "secret plan" not in sent
    deleted = next(m for m in stored_messages() if m.content == "secret plan")
    assert deleted.status == MessageStatus.SUPERSEDED  # kept in the store
    assert ledger_actions() == [(str(deleted.id), "delete", "deleted by you")]


@pytest.fixture
def sink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file an `xclip` put first on PATH writes what it is given to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    written = tmp_path / "clipboard.txt"
    tool = bin_dir / "xclip"
    tool.write_text(f"#!/bin/sh\ncat > {written}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return written


async def test_copy_a_message_and_its_code_block(sink: Path, fake_server: FakeOpenAIServer) -> None:
    fake_server.reply = "Try:\n\n```sh\nls -la\n```\n\nthen:\n\n```python\nprint('hi')\n```\n"
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "how?")
        await press_on(pilot, app, 1, "alt+y")
        await wait_for(pilot, lambda: any("Copied #" in t for t in toasts(app)))
        assert app.clipboard == fake_server.reply  # through the terminal (OSC 52)
        await wait_for(pilot, lambda: sink.exists() and sink.read_text() == fake_server.reply)
        await pilot.press("alt+c")
        await wait_for(pilot, lambda: app.clipboard == "print('hi')\n")
        assert any("the last of 2 code blocks" in t for t in toasts(app))
        await press_on(pilot, app, 0, "alt+c")
        # It names the key that copies a message (a plain y would be typing, in the composer).
        await wait_for(pilot, lambda: any("no code block; Alt+Y copies all of it" in t for t in toasts(app)))


def test_code_blocks_are_found_with_either_fence() -> None:
    text = "a\n```\none\n```\nb\n~~~py\ntwo\n~~~\n```unclosed\nthree"
    assert code_blocks(text) == ["one\n", "two\n"]


async def test_bidi_and_zero_width_characters_show_as_markers_and_copy_exactly(
    sink: Path, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = "Open invoice_\u202egpj.exe\u202c now\u200b; 👩\u200d💻 agrees."
    typed = "Is \u2066report\u2069 safe?\u200b Here is the file list from my disk."
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, typed)
        mine, reply = views(app)[:2]
        # Shown so that it reads as what it is (the emoji's joiner is part of the emoji)...
        assert body(mine) == "Is ⟨U+2066⟩report⟨U+2069⟩ safe?⟨U+200B⟩ Here is the file list from my disk."
        assert body(reply) == "Open invoice_⟨U+202E⟩gpj.exe⟨U+202C⟩ now⟨U+200B⟩; 👩\u200d💻 agrees."
        # ...stored and sent as it was, and copied exactly.
        assert [m.content for m in stored_messages()] == [typed, fake_server.reply]
        assert fake_server.requests[-1]["body"]["messages"][-1]["content"] == typed
        await press_on(pilot, app, 1, "alt+y")
        await wait_for(pilot, lambda: sink.exists() and sink.read_text() == fake_server.reply)
        assert app.clipboard == fake_server.reply
        app.notify("Saved \u202egpj.exe")
        await wait_for(pilot, lambda: any("Saved ⟨U+202E⟩gpj.exe" in t for t in toasts(app)))
