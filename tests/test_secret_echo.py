"""A server that quotes the API key back, on every endpoint, gets it written down nowhere.

The fake server's ``echo_secret`` mode puts the key in chat replies (split over streamed pieces)
and errors (before and during a stream), in the curator's and the memory assessor's JSON, in
summaries and in ``/models``. A whole session in the app with every helper model on, then the
shell commands that read what it stored (and ``heedful replay --base-url``, in test_secrets.py):
the key, or any 8-character piece of it, is in no file under the data and config directories and
in no output.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest
import textual.constants

from cli.main import main
from sessions import paths
from tests.apphelpers import make_app, say, stored_messages, type_command, wait_for, write_config
from tests.fake_openai import FakeOpenAIServer

KEY_VAR = "HEEDFUL_ECHO_TEST_KEY"
KEY = "sk-echo-SECRET-7c41e9a05b3d82f6"
PIECE = 8
PIECES = {KEY[i : i + PIECE] for i in range(len(KEY) - PIECE + 1)}
"""The key and every piece of it a cut could leave: none may be found anywhere."""


def pieces_in(text: str) -> list[str]:
    return sorted(piece for piece in PIECES if piece in text)


def files_holding_the_key(*roots: Path) -> list[str]:
    """Every file under ``roots`` (the database, its WAL and shm, the logs...) with a piece of the key."""
    found = []
    for root in roots:
        for path in (p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes()
            found += [f"{path} holds {piece!r}" for piece in PIECES if piece.encode() in data]
    return found


def echoing_config(server: FakeOpenAIServer) -> None:
    """The fake server as the provider, its key in KEY_VAR, a small window (so the curator is
    asked and older replies summarized), and every helper model on."""
    server.echo_secret = KEY
    server.piece_chars = 5  # the key in a streamed reply comes split over several pieces
    write_config(
        'model = "fake/fake-model"\nmax_retries = 0\n'
        f'[providers.fake]\nbase_url = "{server.base_url}"\napi_key_env = "{KEY_VAR}"\n'
        'models = { "fake-model" = 500 }\n'
        "[curation]\ncurator = true\nmodel_summaries = true\ncurator_timeout = 5.0\n"
        "[memory]\nenabled = true\n"
    )


def kinds(server: FakeOpenAIServer) -> list[str]:
    from tests.fake_openai_errors import _kind

    return [_kind(r["body"]) for r in server.requests if r["outcome"] is not None]


async def test_a_server_that_echoes_the_key_everywhere_gets_it_written_nowhere(
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    data_dir, config_dir = paths.data_dir(), paths.config_path().parent
    data_dir.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(textual.constants, "LOG_FILE", str(data_dir / "textual.log"))  # as TEXTUAL_LOG
    echoing_config(fake_server)
    monkeypatch.setenv(KEY_VAR, KEY)
    app = make_app(env={KEY_VAR: KEY}, curation_models=True)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        for number in range(9):  # whole, refused, cut by an error event: three times each
            await say(pilot, app, f"Step {number}: how do we move the billing tables?", keep=True)
        # The helpers answered (or failed) in the background: every kind was asked, twice or more.
        await wait_for(pilot, lambda: kinds(fake_server).count("plain") >= 2, seconds=30)
        await type_command(pilot, app, "/remember")
        # The memory assessor and the summarizer have stored something ("" is in every row).
        await wait_for(
            pilot, lambda: {"memories", "message_summaries"} <= set(tables_quoting("")), seconds=30
        )
        screen_text = " ".join(str(toast.render()) for toast in app.screen.query("Toast"))
    app.services.store.close()
    assert pieces_in(screen_text) == []
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in fake_server.requests)

    # The server did quote it, everywhere: the errors and fallbacks were stored, without it.
    errors = [m.error for m in stored_messages() if m.error]
    assert any("Upstream failure" in e for e in errors) and len(errors) >= 4
    assert any("the credential [redacted], then" in m.content for m in stored_messages())
    assert files_holding_the_key(data_dir, config_dir) == []
    assert not any(pieces_in(r.getMessage()) for r in caplog.records)

    # What the shell commands print of the session.
    capsys.readouterr()
    assert main(["ledger", "1"]) == 0
    assert main(["ledger", "1", "--json"]) == 0
    ledger = capsys.readouterr().out
    assert "curator" in ledger.lower()
    for fmt in ("jsonl", "md"):
        assert main(["sessions", "export", "1", "--format", fmt]) == 0
    exported = capsys.readouterr().out
    assert "Upstream failure" in exported
    assert pieces_in(ledger + exported) == []
    # Each path did store what the server said, with the key taken out.
    assert set(tables_quoting("[redacted]")) >= {"messages", "ledger", "memories", "message_summaries"}


def tables_quoting(text: str) -> list[str]:
    """The tables of the app's database with ``text`` in some row."""
    with contextlib.closing(sqlite3.connect(paths.database_path())) as db:
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [
            name for name in names if any(text in repr(row) for row in db.execute(f"SELECT * FROM {name}"))
        ]


async def test_the_model_list_of_a_server_that_echoes_the_key_does_not_hold_it(
    fake_server: FakeOpenAIServer,
) -> None:
    from providers.openai_chat import OpenAIChatModel

    fake_server.echo_secret = KEY
    model = OpenAIChatModel(
        model="fake-model", base_url=fake_server.base_url, api_key=KEY, context_window=8192
    )
    try:
        names = await model.list_models()
        assert await model.window_limit() is None  # /models/fake-model quoted the key in an error
    finally:
        await model.aclose()
    assert "fake-model" in names and len(names) == 3
    assert pieces_in(" ".join(names)) == []
