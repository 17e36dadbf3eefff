"""The real app, killed or doubled up, loses nothing: subprocesses in a pty on the test's data dir.

The apps run as ``python -m cli`` (tests/pty_app.py) against the loopback fake server; the test
reads the database through read-only connections of its own while they run.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.widgets import Markdown, Static

from engine.chat import MessageStatus
from sessions import paths
from sessions.store import INTERRUPTED_BY_EXIT, open_store
from tests.apphelpers import make_app, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.fake_openai_errors import _text_of
from tests.pty_app import PtyApp, integrity_check, read_store, running_apps, send_message
from tui.widgets.message_view import MessageView

MODEL_ARGS = ("--model", "fake-model")


@pytest.fixture
def start_app() -> Iterator[Callable[..., PtyApp]]:
    """Starts real apps in ptys; every one is killed at the end of the test, pass or fail."""
    with running_apps() as start:
        yield start


def _reply_row(prefix: str) -> tuple[str, str, str | None] | None:
    """(status, content, error) of the one assistant message whose text starts with ``prefix``."""
    rows = read_store(
        paths.database_path(),
        "SELECT status, content, error FROM messages WHERE role = 'assistant' AND substr(content, 1, ?) = ?",
        [len(prefix), prefix],
    )
    assert len(rows) <= 1, rows
    if not rows:
        return None
    status, content, error = rows[0]
    return str(status), str(content), str(error) if error else None  # "" and NULL both mean none


def _body(view: MessageView) -> str:
    widget = view.query_one(".body")
    return widget.source if isinstance(widget, Markdown) else str(widget.render())


# --- kill -9 while a reply streams -------------------------------------------------------------

LONG_REPLY = " ".join(f"w{n:04d}" for n in range(800))


async def test_sigkill_while_streaming_keeps_the_flushed_reply_marked_interrupted(
    fake_server: FakeOpenAIServer, start_app: Callable[..., PtyApp]
) -> None:
    fake_server.reply = LONG_REPLY
    fake_server.chunk_delay = 0.05  # 40 s for the whole reply: the kill always lands mid-stream
    database = paths.database_path()
    app = start_app(["--base-url", fake_server.base_url, *MODEL_ARGS])
    app.wait_ready()
    send_message(app, database, "tell me a long story")
    # The turn service writes the streamed text every 0.5 s: wait for a write with some words in it.
    app.wait_for(
        lambda: (row := _reply_row("w0000")) and row[0] == "streaming" and len(row[1].split()) >= 3,
        what="the streaming reply flushed to the store",
    )
    assert app.kill(signal.SIGKILL) == -signal.SIGKILL

    assert integrity_check(database) == ["ok"]
    left = _reply_row("w0000")
    assert left is not None
    status, flushed, error = left
    # Killed mid-stream: the row is still marked streaming, with the words written so far.
    assert status == "streaming" and error is None
    assert LONG_REPLY.startswith(flushed) and 0 < len(flushed) < len(LONG_REPLY)

    store = open_store(database).store  # what any later start does first
    try:
        assert store.integrity_problems() == []
        [session] = store.list_sessions()
        user, reply = store.messages(session.id)
    finally:
        store.close()
    assert (user.role, user.content, user.status) == ("user", "tell me a long story", MessageStatus.COMPLETE)
    assert (reply.role, reply.content) == ("assistant", flushed)
    assert reply.status == MessageStatus.INTERRUPTED
    assert reply.error == INTERRUPTED_BY_EXIT

    # The app started again on the same data dir shows both, the reply marked as cut off.
    again = make_app(base_url=fake_server.base_url, model="fake-model")
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: len(views(again)) == 2 and views(again)[1].is_mounted, 20)
        shown_user, shown_reply = views(again)
        await wait_for(pilot, lambda: shown_reply.has_class("-problem"), 5)
        assert _body(shown_user) == "tell me a long story"
        assert _body(shown_reply) == flushed
        assert shown_reply.message.status == MessageStatus.INTERRUPTED
        problem = shown_reply.query_one(".problem", Static)
        assert INTERRUPTED_BY_EXIT in str(problem.render())


# --- two apps on one database ------------------------------------------------------------------

HOLD_AT = 15
"""Each reply streams this many pieces, then waits for the test to release it."""


def reply_for(prompt: str) -> str:
    return f"Reply to [{prompt}] " + " ".join(f"r{n:02d}" for n in range(16))


class HeldReplies(FakeOpenAIServer):
    """A fake server whose replies stop part way until the test releases them, so that one app is
    certainly streaming while the other sends.

    The stop is taken in the server's per-piece read of ``chunk_delay``, in the thread that
    serves the request (which ``reply`` tells which prompt it is answering).
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self.holding: dict[str, threading.Event] = {}
        self.released: dict[str, threading.Event] = {}
        self._guard = threading.Lock()
        super().__init__(reply=self._reply)

    def _events(self, prompt: str) -> tuple[threading.Event, threading.Event]:
        with self._guard:
            return (
                self.holding.setdefault(prompt, threading.Event()),
                self.released.setdefault(prompt, threading.Event()),
            )

    def _reply(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        prompt = next(_text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user")
        self._local.prompt = prompt
        self._local.sent = 0
        return reply_for(prompt)

    @property
    def chunk_delay(self) -> float:
        prompt = getattr(self._local, "prompt", None)
        if prompt is not None:
            self._local.sent += 1
            if self._local.sent == HOLD_AT:
                holding, released = self._events(prompt)
                holding.set()
                while not (released.wait(0.05) or self.stopping.is_set()):
                    pass
        return 0.04

    @chunk_delay.setter
    def chunk_delay(self, value: float) -> None:
        pass  # the base class sets it; this server paces itself

    def wait_holding(self, prompt: str) -> None:
        holding, _ = self._events(prompt)
        assert holding.wait(30), f"the reply to {prompt!r} never started streaming"

    def release(self, prompt: str) -> None:
        self._events(prompt)[1].set()

    def release_all(self) -> None:
        with self._guard:
            events = list(self.released.values())
        for event in events:
            event.set()


@pytest.fixture
def held_server() -> Iterator[HeldReplies]:
    server = HeldReplies()
    server.start()
    try:
        yield server
    finally:
        server.release_all()
        server.stop()


def _streaming(prompt: str) -> bool:
    row = _reply_row(f"Reply to [{prompt}]")
    return row is not None and row[0] == "streaming"


def _complete(prompt: str) -> bool:
    row = _reply_row(f"Reply to [{prompt}]")
    return row is not None and row[0] == "complete" and row[1] == reply_for(prompt)


def test_two_apps_on_one_database_interleaved_lose_nothing(
    held_server: HeldReplies, start_app: Callable[..., PtyApp]
) -> None:
    database = paths.database_path()
    args = ["--base-url", held_server.base_url, *MODEL_ARGS]
    first = start_app(args)
    first.wait_ready()

    def send(app: PtyApp, prompt: str) -> None:
        send_message(app, database, prompt)
        held_server.wait_holding(prompt)
        app.wait_for(lambda: _streaming(prompt), what=f"the reply to {prompt!r} streaming")

    def finish(app: PtyApp, prompt: str) -> None:
        held_server.release(prompt)
        app.wait_for(lambda: _complete(prompt), what=f"the reply to {prompt!r} complete")

    send(first, "A1 from the first app")
    # The second app opens the database while the first one's reply is streaming.
    second = start_app(args)
    second.wait_ready()
    send(second, "B1 from the second app")  # both replies stream now
    finish(first, "A1 from the first app")
    send(first, "A2 from the first app")
    finish(second, "B1 from the second app")
    send(second, "B2 from the second app")
    finish(first, "A2 from the first app")
    send(first, "A3 from the first app")
    finish(second, "B2 from the second app")
    send(second, "B3 from the second app")
    finish(first, "A3 from the first app")
    finish(second, "B3 from the second app")
    assert first.quit() == 0
    assert second.quit() == 0

    assert integrity_check(database) == ["ok"]
    store = open_store(database).store
    try:
        assert store.integrity_problems() == []
        sessions = store.list_sessions()
        messages = [m for s in sessions for m in store.messages(s.id)]
    finally:
        store.close()
    # The second app opened the latest session, the one the first app was writing: one session.
    assert len(sessions) == 1 and sessions[0].message_count == 12
    prompts = [
        f"{who}{n} from the {app} app" for n in (1, 2, 3) for who, app in (("A", "first"), ("B", "second"))
    ]
    assert sorted(m.content for m in messages if m.role == "user") == sorted(prompts)
    replies = [m for m in messages if m.role == "assistant"]
    assert sorted(m.content for m in replies) == sorted(reply_for(p) for p in prompts)
    assert all(m.status == MessageStatus.COMPLETE for m in replies), [(m.id, m.status) for m in replies]
    # Each app's turns are in its own order: its messages alternate user, reply, user, reply.
    for who in ("A", "B"):
        own = [m for m in messages if m.content.startswith((who, f"Reply to [{who}"))]
        assert [m.role for m in own] == ["user", "assistant"] * 3
        assert [m.content for m in own[::2]] == [p for p in prompts if p.startswith(who)]


def test_a_second_app_starting_leaves_the_first_apps_streaming_reply_alone(
    held_server: HeldReplies, start_app: Callable[..., PtyApp]
) -> None:
    database = paths.database_path()
    first = start_app(["--base-url", held_server.base_url, *MODEL_ARGS])
    first.wait_ready()
    send_message(first, database, "A1 from the first app")
    held_server.wait_holding("A1 from the first app")
    first.wait_for(lambda: _streaming("A1 from the first app"), what="the reply streaming")
    # What a second app does first when it starts (cli/chat.py), while the first one streams.
    open_store(database).store.close()
    row = _reply_row("Reply to [A1 from the first app]")
    assert row is not None
    assert (row[0], row[2]) == ("streaming", None), f"a reply still being written was marked {row}"
    held_server.release("A1 from the first app")
    first.wait_for(lambda: _complete("A1 from the first app"), what="the reply complete")
