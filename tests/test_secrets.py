"""API keys reach the server and nothing else; every file and directory Heedful makes is private.

A key comes from the environment variable the config names (``api_key_env``) and is sent as the
``Authorization`` header. It must never be written down: not in the database or its log, not in a
moved-aside database, not in the config, the ledger, the replay output or anything logged. The
checks read the files' bytes, so they hold whatever the storage format.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import textual.constants

from cli.chat import build_services
from cli.main import main
from engine.chat import MessageStatus
from engine.errors import ModelErrorKind
from engine.turn.events import ReplyFailed
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import make_app, send, stored_messages, toasts, views, wait_for, write_config
from tests.fake_openai import FakeOpenAIServer

KEY_VAR = "HEEDFUL_TEST_PROVIDER_KEY"
KEY = "sk-heedful-SECRET-4f9b2c7e1d8a6035"
WRONG_KEY = "sk-heedful-WRONGKEY-93ab51e07c2d"
# The whole keys, and a piece of each, in case something writes a shortened key.
NEEDLES = (KEY.encode(), b"4f9b2c7e1d8a", WRONG_KEY.encode(), b"93ab51e07c2d")


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common default umask, which lets files be readable by everyone unless Heedful says no."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def leaks(*roots: Path) -> list[str]:
    """Every file under ``roots`` (or each root, if a file) that holds any of NEEDLES."""
    found = []
    for root in roots:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for path in files:
            data = path.read_bytes()
            found += [f"{path} holds {needle!r}" for needle in NEEDLES if needle in data]
    return found


def not_private(root: Path) -> list[str]:
    """Everything under ``root`` (and ``root``) that others could read: files not 0600, dirs not 0700."""
    wrong = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        wanted = 0o700 if path.is_dir() else 0o600
        if mode != wanted:
            wrong.append(f"{path} is {mode:o}")
    return wrong


def cut_mid_page(database: Path) -> None:
    """Damage the database as an interrupted copy would, and leave it world-readable as ``cp`` would."""
    data = database.read_bytes()
    database.write_bytes(data[: len(data) - 1000])
    database.chmod(0o644)


async def test_the_key_reaches_the_server_and_is_written_nowhere(
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    umask_022: None,
) -> None:
    caplog.set_level(logging.DEBUG)  # everything openai and its HTTP client log
    textual_log = tmp_path / "textual.log"  # as with TEXTUAL_LOG set: everything the app logs
    monkeypatch.setattr(textual.constants, "LOG_FILE", str(textual_log))
    write_config(
        'model = "fake/fake-model"\nmax_retries = 0\n'
        f'[providers.fake]\nbase_url = "{fake_server.base_url}"\napi_key_env = "{KEY_VAR}"\n'
        'models = { "fake-model" = 8192 }\n'
    )
    fake_server.api_key = KEY
    data_dir, config_dir = paths.data_dir(), paths.config_path().parent

    monkeypatch.setenv(KEY_VAR, KEY)
    app = make_app(env={KEY_VAR: KEY})
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "hello there")
        assert views(app)[1].message.content == "Echo: hello there"
        fake_server.faults.append("500")
        await send(pilot, "this one fails")
        assert views(app)[-1].message.status == MessageStatus.FAILED
        # Now, while the write-ahead log holds the latest writes.
        assert os.path.getsize(f"{paths.database_path()}-wal") > 0  # noqa: ASYNC240
        assert leaks(data_dir, config_dir) == []
        assert not_private(data_dir) == []
    app.services.store.close()
    assert [r["headers"]["authorization"] for r in fake_server.requests] == [f"Bearer {KEY}"] * 2

    # A wrong key, through the same services without the screen: the 401 is stored as the error.
    monkeypatch.setenv(KEY_VAR, WRONG_KEY)
    services, _ = build_services(env={KEY_VAR: WRONG_KEY})
    try:
        events = [event async for event in services.turns.send(None, "with the wrong key")]
    finally:
        await services.turns.model.aclose()
        services.store.close()
    assert isinstance(events[-1], ReplyFailed) and events[-1].error.kind == ModelErrorKind.AUTH
    assert fake_server.requests[-1]["headers"]["authorization"] == f"Bearer {WRONG_KEY}"

    # The errors were stored (so there was something to leak), and none of them quotes a key.
    errors = [m.error for m in stored_messages() if m.error]
    assert any("500" in e for e in errors) and any("401" in e for e in errors)
    store = open_store(paths.database_path()).store
    try:
        session_ids = [s.id for s in store.list_sessions()]
        ledger = [e.as_json() for s in session_ids for e in store.ledger(s)]
    finally:
        store.close()
    assert ledger, "the curation engine should have logged its decisions"
    assert not any(needle.decode() in json.dumps(ledger) for needle in NEEDLES)

    # Every session exported both ways (`heedful sessions export`): the errors go along, the key does not.
    exports = tmp_path / "exports"
    exports.mkdir()
    for session_id in session_ids:
        for fmt in ("jsonl", "md"):
            written = str(exports / f"{session_id}.{fmt}")
            assert main(["sessions", "export", str(session_id), "--format", fmt, "--output", written]) == 0
    exported = [p.read_text(encoding="utf-8") for p in exports.iterdir()]
    assert len(exported) == 2 * len(session_ids)
    assert any("401" in text for text in exported) and any("500" in text for text in exported)
    assert leaks(exports) == []

    # The database gets damaged and is moved aside at the next start: still nothing, still private.
    cut_mid_page(paths.database_path())
    services, _ = build_services(env={KEY_VAR: KEY})
    services.store.close()
    (aside,) = data_dir.glob("heedful.db.corrupt-*")
    assert aside.stat().st_size > 0

    assert leaks(data_dir, config_dir) == []
    assert not_private(data_dir) == []  # the config here is the user's (write_config), not Heedful's
    assert textual_log.stat().st_size > 0 and leaks(textual_log) == []
    assert any(r.name.startswith("openai") for r in caplog.records)
    assert not any(needle.decode() in caplog.text for needle in NEEDLES)


async def test_a_key_the_server_echoes_in_an_error_is_not_passed_on(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_redaction import chat_error, server_says

    server_says(monkeypatch, fake_server, f"upstream refused the key {KEY}")
    said = await chat_error(fake_server, KEY)
    assert "upstream refused" in said  # the server's words are passed on...
    assert KEY not in said  # ...but not the key in them


def test_the_replay_output_never_holds_the_key(
    fake_server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # replay reads the key ($OPENAI_API_KEY) only with --base-url, for a live curator and
    # summarizer: against a server that quotes it back in every answer and error.
    from tests.test_secret_echo import KEY as ECHO_KEY
    from tests.test_secret_echo import echoing_config, files_holding_the_key, kinds, pieces_in

    echoing_config(fake_server)
    fake_server.api_key = ECHO_KEY  # only a request that carries the key is answered
    monkeypatch.setenv("OPENAI_API_KEY", ECHO_KEY)
    transcript = tmp_path / "t.jsonl"
    rows = []
    for n in range(12):  # as test_replay's live run: replies long enough for the model to summarize
        reply = (
            f"We decided to deploy the billing service from deploy.sh on Friday {n + 1} March at 02:00 "
            f"UTC. The migration failed with ECONNREFUSED on port {5400 + n} because db-stage-2 was down. "
        ) * 3
        rows += [
            {
                "id": f"u{n}",
                "role": "user",
                "content": f"What did we decide about deploy.sh and db-stage-2? (question {n})",
            },
            {"id": f"a{n}", "role": "assistant", "content": reply},
        ]
    transcript.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = ["replay", str(transcript), "--context-window", "1200", "--consent", "keep"]
    assert main([*args, "--base-url", fake_server.base_url, "--model", "fake-model"]) == 0
    output = capsys.readouterr()
    calls = json.loads(output.out)["curation_calls"]
    assert calls["calls"] > 0 and calls["summaries_failed"] > 0, "the curator and summarizer were asked"
    assert {"json", "plain"} <= set(kinds(fake_server)), "both quoted the key back"
    assert pieces_in(output.out + output.err) == []
    assert not paths.data_dir().exists() or files_holding_the_key(paths.data_dir()) == []


def test_every_file_and_directory_heedful_creates_is_private_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    home = tmp_path / "home"  # nothing of this exists yet: Heedful makes all of it
    monkeypatch.setenv("HEEDFUL_DATA_DIR", str(home / "share" / "heedful"))
    monkeypatch.setenv("HEEDFUL_CONFIG", str(home / "config" / "heedful" / "config.toml"))

    services, _ = build_services(env={})
    try:
        session = services.store.create_session("private")
        services.store.add_message(session.id, "user", "between you and me")
        made = {p.relative_to(home).as_posix() for p in home.rglob("*")}
        assert {"share/heedful/heedful.db-wal", "share/heedful/heedful.db-shm"} <= made
        assert "config/heedful/config.toml" in made
        assert not_private(home) == []
    finally:
        services.store.close()

    cut_mid_page(paths.database_path())
    services, _ = build_services(env={})
    services.store.close()
    assert list(paths.data_dir().glob("heedful.db.corrupt-*"))
    assert not_private(home) == []


async def test_an_unplanned_failure_quoting_the_key_is_shown_and_logged_without_it(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A background worker fails with an error whose text holds the key (a server's words in an
    exception nobody planned for): the toast and Textual's log file say what failed, not the key."""
    plain_key = "heedful-Key-3Hq8Zt5Wm2Xc7Rv9"  # no provider's shape: only knowing the key catches it
    textual_log = tmp_path / "textual.log"
    monkeypatch.setattr(textual.constants, "LOG_FILE", str(textual_log))
    app = make_app(base_url=fake_server.base_url, model="fake-model", env={"OPENAI_API_KEY": plain_key})

    async def failing(session_id: int) -> int:
        raise RuntimeError(f"upstream refused credential {plain_key}\x1b]0;TITLE\x07")

    monkeypatch.setattr(app.services.turns, "write_summaries", failing)
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "hello there")
        await wait_for(pilot, lambda: any("Something went wrong" in t for t in toasts(app)))
        shown = "\n".join(toasts(app))
        screen = app.export_screenshot()
    app.services.store.close()
    assert "RuntimeError: upstream refused credential [redacted]␛]0;TITLE" in shown
    log = textual_log.read_text(encoding="utf-8")
    assert "worker failed RuntimeError: upstream refused credential [redacted]" in log
    assert [text for text in (shown, screen, log) if plain_key[:8] in text or plain_key[-8:] in text] == []
    assert "\x1b]0;TITLE" not in log


async def test_a_crash_report_shows_no_key_in_the_error_or_in_local_variables(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Textual prints a crash's traceback with every frame's local variables when the app ends: a
    frame holding the key (a client's) or an error quoting it must not put it on the terminal."""
    plain_key = "heedful-Key-8Nd4Jw6Qs1Ty5Kp3"
    app = make_app(env={"OPENAI_API_KEY": plain_key})

    def connect() -> None:
        api_key = plain_key  # as in a client's frame
        raise RuntimeError(f"the server refused {api_key}")

    with pytest.raises(RuntimeError):
        async with app.run_test() as pilot:
            app.call_later(connect)
            await pilot.pause()
    app.services.store.close()
    printed = capsys.readouterr().err
    assert "RuntimeError: the server refused [redacted]" in printed  # the crash is still reported
    assert plain_key[:8] not in printed and plain_key[-8:] not in printed


async def test_a_key_an_older_heedful_stored_is_not_shown_in_the_app() -> None:
    """An older Heedful stored a server's error as it came, key and all: the reply's problem line
    and the ledger (F6) show it without the key, while the key is in use."""
    from textual.widgets import DataTable

    from engine.curation.items import ItemState
    from engine.curation.ledger import EntryKind, LedgerEntry
    from engine.protocols.store import ItemRecord
    from tests.test_app import text_of
    from tui.screens.ledger import LedgerScreen

    plain_key = "heedful-Key-5Vr2Lc9Hx4Mn7Bq1"
    quoted = f"Upstream failure for credential {plain_key}"
    store = open_store(paths.database_path()).store
    try:
        session = store.create_session("older")
        store.add_message(session.id, "user", "hello")
        failed = store.add_message(session.id, "assistant", "")
        store.update_message(failed.id, status=MessageStatus.FAILED, error=quoted)
        entry = LedgerEntry(EntryKind.OPERATION, 1, str(failed.id), "keep", f"curator fell back: {quoted}")
        store.save_curation(
            session.id, items=[ItemRecord(failed.id, ItemState.ACTIVE)], entities=[], ledger=[entry]
        )
    finally:
        store.close()
    app = make_app(env={"OPENAI_API_KEY": plain_key})
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: len(views(app)) == 2 and views(app)[1].query(".problem"))
        problem = text_of(views(app)[1].query_one(".problem"))
        await pilot.press("f6")
        await wait_for(
            pilot, lambda: isinstance(app.screen, LedgerScreen) and app.screen.is_mounted
        )  # composed
        rows = app.screen.query_one("#ledger-table", DataTable)
        shown = [" ".join(map(str, rows.get_row_at(i))) for i in range(rows.row_count)]
    app.services.store.close()
    assert "Upstream failure for credential [redacted]" in problem
    assert any("curator fell back: Upstream failure for credential [redacted]" in row for row in shown)
    assert [text for text in [problem, *shown] if plain_key[:8] in text or plain_key[-8:] in text] == []
