"""The real app told to stop by a signal (a kill, a closed terminal) leaves the terminal usable and
keeps the reply it was streaming: a subprocess in a pty (tests/pty_app.py) on the fake server."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable, Iterator

import pytest

from engine.chat import MessageStatus
from engine.turn.service import closed_by_signal
from sessions import paths
from tests.fake_openai import FakeOpenAIServer
from tests.pty_app import PtyApp, integrity_check, read_store, running_apps, send_message

LONG_REPLY = " ".join(f"w{n:04d}" for n in range(800))
RESTORED = {
    "the main screen back": b"\x1b[?1049l",
    "the cursor shown": b"\x1b[?25h",
    "mouse tracking off": b"\x1b[?1000l",
}


@pytest.fixture
def start_app() -> Iterator[Callable[..., PtyApp]]:
    with running_apps() as start:
        yield start


def _reply() -> tuple[str, str, str | None] | None:
    rows = read_store(
        paths.database_path(), "SELECT status, content, error FROM messages WHERE role = 'assistant'"
    )
    if not rows:
        return None
    [(status, content, error)] = rows
    return str(status), str(content), str(error) if error else None


def _stored_text() -> str:
    """The streaming reply's text as stored now ("" before there is one)."""
    row = _reply()
    return row[1] if row is not None else ""


def _last_word(text: bytes | str) -> int:
    found = re.findall(r"w(\d{4})", text if isinstance(text, str) else text.decode("utf-8", "replace"))
    return max(map(int, found), default=-1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_mid_stream_restores_the_terminal_and_keeps_the_reply(
    sig: signal.Signals, fake_server: FakeOpenAIServer, start_app: Callable[..., PtyApp]
) -> None:
    fake_server.reply = LONG_REPLY
    fake_server.chunk_delay = 0.05  # 40 s for the whole reply: the signal always lands mid-stream
    database = paths.database_path()
    app = start_app(["--base-url", fake_server.base_url, "--model", "fake-model"])
    app.wait_ready()
    send_message(app, database, "tell me a long story")
    app.wait_for(
        lambda: (row := _reply()) and row[0] == "streaming" and _last_word(row[1]) >= 5,
        what="the streaming reply flushed to the store",
    )
    app.wait_for(lambda: _last_word(app.output) > _last_word(_stored_text()), what="more shown than stored")
    shown = _last_word(app.output)
    mark = app.mark()
    started = time.monotonic()
    code = app.kill(sig, timeout=10)
    took = time.monotonic() - started

    assert code in (0, 128 + sig), f"exit status {code}"
    assert took < 2.0, f"took {took:.1f}s to exit"
    after = app.output_since(mark)
    for what, sequence in RESTORED.items():
        assert sequence in after, f"the terminal was left without {what}"
    assert integrity_check(database) == ["ok"]
    row = _reply()
    assert row is not None
    status, content, error = row
    assert status == MessageStatus.INTERRUPTED and error == closed_by_signal(sig.name)
    # Every word shown before the signal is kept, and the text is the reply's own beginning.
    assert _last_word(content) >= shown and LONG_REPLY.startswith(content)
