"""``heedful sessions list | export | import | delete`` and ``heedful ledger``: output, exit codes
(0 done, 2 bad input, 1 anything else), messages on stderr, never a traceback."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from engine.chat import MessageStatus
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.protocols.store import ItemRecord
from sessions import paths
from sessions.migrations import SCHEMA_VERSION
from sessions.store import SqliteChatStore
from tests.apphelpers import users_store, write_config

HEEDFUL = Path(sys.executable).with_name("heedful")


def make_session(title: str, *texts: str, pin_last: bool = False) -> int:
    """A session in the user's database (HEEDFUL_DATA_DIR, see conftest), closed again."""
    with users_store() as store:
        session = store.create_session(title)
        last = None
        for n, text in enumerate(texts):
            last = store.add_message(session.id, ("user", "assistant")[n % 2], text)
        if pin_last and last is not None:
            store.save_curation(
                session.id, items=[ItemRecord(last.id, ItemState.ACTIVE, pinned=True)], entities=[], ledger=[]
            )
        return session.id


def session_titles() -> list[str]:
    with users_store() as store:
        return [s.title for s in store.list_sessions()]


class Terminal(io.StringIO):
    """Standard output as a terminal."""

    def isatty(self) -> bool:
        return True


def test_list_shows_id_messages_update_and_title(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "list"]) == 0
    assert capsys.readouterr().err == "No sessions yet.\n"
    first = make_session("Debugging the deploy", "hi", "hello")
    second = make_session("Cat vaccines", "one")
    assert main(["sessions", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "MESSAGES", "UPDATED", "TITLE"]
    assert lines[1].split()[:2] == [str(second), "1"] and lines[1].endswith("  Cat vaccines")
    assert lines[2].split()[:2] == [str(first), "2"] and lines[2].endswith("  Debugging the deploy")


def test_a_title_with_control_codes_reaches_a_terminal_inert(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_session("evil \x1b]52;c;aGk=\x07 title")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["sessions", "list"]) == 0
    shown = terminal.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "␛]52;c;aGk=" in shown


def test_export_writes_jsonl_or_markdown_privately_and_by_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = make_session("Notes", "What is the flux?", "A capacitor.", pin_last=True)

    assert main(["sessions", "export", str(session)]) == 0  # standard output, JSON Lines
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["role"], row["content"], row["pinned"]) for row in lines] == [
        ("user", "What is the flux?", False),
        ("assistant", "A capacitor.", True),
    ]
    assert lines[0]["session"]["title"] == "Notes"

    markdown = tmp_path / "notes.md"
    assert main(["sessions", "export", str(session), "--output", str(markdown)]) == 0
    assert f"to '{markdown}'" in capsys.readouterr().err
    assert markdown.read_text(encoding="utf-8").startswith("# Notes\n")
    assert stat.S_IMODE(markdown.stat().st_mode) == 0o600

    forced = tmp_path / "notes.md.jsonl"
    assert main(["sessions", "export", str(session), "--format", "jsonl", "--output", str(forced)]) == 0
    assert json.loads(forced.read_text(encoding="utf-8").splitlines()[0])["id"]
    assert main(["sessions", "export", str(session), "--format", "md"]) == 0
    assert "## You · " in capsys.readouterr().out


def test_export_of_a_missing_session_is_bad_input_and_an_unwritable_file_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "export", "42"]) == 2
    assert "there is no session 42" in capsys.readouterr().err
    session = make_session("s", "hi")
    assert (
        main(["sessions", "export", str(session), "--output", str(tmp_path / "no" / "such" / "dir.jsonl")])
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("heedful sessions export: could not write") and "Traceback" not in err
    assert list(tmp_path.glob("**/.dir.jsonl.*")) == []


def test_import_adds_a_session_and_export_gives_the_same_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = make_session("Round trip", "question", "answer", "more", pin_last=True)
    exported = tmp_path / "s.jsonl"
    assert main(["sessions", "export", str(original), "--output", str(exported)]) == 0
    capsys.readouterr()

    assert main(["sessions", "import", str(exported)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Imported 3 messages from '{exported}' as session ") and out.rstrip().endswith(
        "Round trip"
    )
    new_id = int(out.split(" as session ")[1].split(":")[0])
    assert new_id != original and session_titles() == ["Round trip", "Round trip"]

    again = tmp_path / "again.jsonl"
    assert main(["sessions", "export", str(new_id), "--output", str(again)]) == 0
    assert again.read_bytes() == exported.read_bytes()


def test_import_names_the_bad_line_and_imports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "role": "user", "content": "fine"}\n{"id": "b", "role": "robot", "content": "x"}\n'
    )
    assert main(["sessions", "import", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"heedful sessions import: '{bad}', line 2: "
        "role must be one of system, user, assistant, tool (got 'robot').\n"
    )
    assert main(["sessions", "import", str(tmp_path / "missing.jsonl")]) == 2
    assert "could not be read" in capsys.readouterr().err
    assert session_titles() == []


def test_delete_with_yes_deletes_for_good(capsys: pytest.CaptureFixture[str]) -> None:
    keep, gone = make_session("keep", "a"), make_session("gone", "b")
    assert main(["sessions", "delete", str(gone), "--yes"]) == 0
    assert capsys.readouterr().err == f"Deleted session {gone}.\n"
    assert session_titles() == ["keep"]
    assert main(["sessions", "delete", str(gone), "--yes"]) == 2
    assert f"there is no session {gone}" in capsys.readouterr().err
    assert keep


def test_delete_without_yes_asks_on_a_terminal_and_refuses_otherwise(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session("precious", "a", "b")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal: never guess
    assert main(["sessions", "delete", str(session)]) == 2
    assert "add --yes" in capsys.readouterr().err

    asked: list[str] = []
    answers = iter(["n", "yes"])
    monkeypatch.setattr(sys, "stdin", Terminal())

    def answer(question: str) -> str:
        asked.append(question)
        return next(answers)

    monkeypatch.setattr("builtins.input", answer)
    assert main(["sessions", "delete", str(session)]) == 1
    assert "nothing was deleted" in capsys.readouterr().err
    assert session_titles() == ["precious"]
    assert main(["sessions", "delete", str(session)]) == 0
    assert session_titles() == []
    assert (
        asked[0] == f"Delete session {session} “precious” and its 2 messages? This cannot be undone. [y/N] "
    )


def test_ledger_prints_the_decisions_as_text_or_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = [
        {"id": f"m{n}", "role": ("user", "assistant")[n % 2], "content": f"note {n} about the deploy " * 30}
        for n in range(16)
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # Replay curates into the user's database when HEEDFUL_DATA_DIR is set (it is, in tests).
    assert (
        main(["replay", str(transcript), "--context-window", "900", "--output", str(tmp_path / "o.json")])
        == 0
    )
    with users_store() as store:
        (session,) = [s.id for s in store.list_sessions()]

    assert main(["ledger", str(session), "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert entries and {"id", "kind", "turn", "target", "action", "reason", "scores"} <= set(entries[0])
    assert [e["id"] for e in entries] == sorted(e["id"] for e in entries)

    assert main(["ledger", str(session)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert len(text) == len(entries)
    first = entries[0]
    assert text[0].startswith(f"turn {first['turn']:>3}  {first['kind']}") and first["reason"] in text[0]

    empty = make_session("quiet", "hi")
    assert main(["ledger", str(empty)]) == 0
    assert "empty" in capsys.readouterr().err
    assert main(["ledger", "999"]) == 2


def test_a_database_that_cannot_be_used_is_a_failure_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    database = paths.database_path()
    store = SqliteChatStore(database)
    store.close()
    conn = sqlite3.connect(database)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    for command in (["sessions", "list"], ["sessions", "export", "1"], ["ledger", "1"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert "newer version of Heedful" in err and "Traceback" not in err


def test_bad_arguments_are_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (
        ["sessions"],
        ["sessions", "export", "zero"],
        ["sessions", "export", "1", "--format", "pdf"],
    ):
        with pytest.raises(SystemExit) as exited:
            main(command)
        assert exited.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_the_installed_command_round_trips_a_session(tmp_path: Path) -> None:
    """Through ``.venv/bin/heedful`` in a separate process, as a user would run it."""
    session = make_session("Installed", "one", "two", pin_last=True)
    env = {**os.environ}

    def heedful(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(HEEDFUL), *args], capture_output=True, text=True, env=env, timeout=60)

    exported = tmp_path / "out.jsonl"
    done = heedful("sessions", "export", str(session), "--output", str(exported))
    assert done.returncode == 0, done.stderr
    done = heedful("sessions", "import", str(exported))
    assert done.returncode == 0 and "as session" in done.stdout, done.stderr
    listed = heedful("sessions", "list")
    assert listed.returncode == 0 and listed.stdout.count("Installed") == 2
    missing = heedful("sessions", "delete", "999", "--yes")
    assert missing.returncode == 2 and "there is no session 999" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_list_export_and_import_give_one_message_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from engine.chat import MessageStatus

    with users_store() as store:
        session = store.create_session("Retried twice")
        store.add_message(session.id, "user", "why does the build fail?")
        for _ in range(2):  # two replies the user retried: kept in the store, not shown
            old = store.add_message(session.id, "assistant", "a reply the user did not like")
            store.update_message(old.id, status=MessageStatus.SUPERSEDED)
        store.add_message(session.id, "assistant", "the lock file is stale")
        store.add_message(session.id, "user", "thanks")
    assert main(["sessions", "list"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:2] == [str(session.id), "3"]
    from tui.screens.sessions import describe

    with users_store() as store:
        (listed,) = store.list_sessions()
    assert "\n   3 messages · " in describe(listed, current=False).plain  # the sessions screen
    markdown, transcript = tmp_path / "s.md", tmp_path / "s.jsonl"
    assert main(["sessions", "export", str(session.id), "--output", str(markdown)]) == 0
    assert f"({3} messages)" in capsys.readouterr().err
    assert "\n3 messages · exported from Heedful\n" in markdown.read_text(encoding="utf-8")
    assert main(["sessions", "export", str(session.id), "--output", str(transcript)]) == 0
    said = capsys.readouterr().err
    assert "(3 messages, and 2 replaced replies not shown in the chat)" in said
    assert main(["sessions", "import", str(transcript)]) == 0
    assert capsys.readouterr().out.startswith("Imported 3 messages, and 2 replaced replies")
    assert main(["sessions", "list"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]] == ["3", "3"]


STORED_KEY = "heedful-Key-7Q2x9Lm4Pz8Rt6Vb"
"""A key not shaped like any provider's (no ``sk-``): only knowing the key in use can catch it."""


@pytest.mark.parametrize("where", ["OPENAI_API_KEY", "a provider's api_key_env"])
def test_a_key_an_older_heedful_stored_is_printed_by_no_command(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if where == "OPENAI_API_KEY":
        monkeypatch.setenv("OPENAI_API_KEY", STORED_KEY)
    else:
        monkeypatch.setenv("MY_PROVIDER_KEY", STORED_KEY)
        write_config(
            '[providers.mine]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "MY_PROVIDER_KEY"\n'
        )
    quoted = f"Upstream failure for credential {STORED_KEY} (retry later)"
    # As an older Heedful stored a server's error: the key in every text a command prints.
    with users_store() as store:
        session = store.create_session(f"key {STORED_KEY}")
        store.add_message(session.id, "user", f"my key is {STORED_KEY}")
        reply = store.add_message(session.id, "assistant", quoted)
        failed = store.add_message(session.id, "assistant", "")
        store.update_message(failed.id, status=MessageStatus.FAILED, error=quoted)
        entry = LedgerEntry(
            EntryKind.OPERATION, 1, str(reply.id), "summarize", f"curator fell back: {quoted}"
        )
        store.save_curation(
            session.id,
            items=[ItemRecord(reply.id, ItemState.SUMMARIZED, summary=quoted)],
            entities=[],
            ledger=[entry],
        )
    commands = [
        ["ledger", str(session.id)],
        ["ledger", str(session.id), "--json"],
        ["sessions", "export", str(session.id)],
        ["sessions", "export", str(session.id), "--format", "md"],
        ["sessions", "list"],
    ]
    printed = []
    for argv in commands:
        assert main(argv) == 0, argv
        out = capsys.readouterr()
        printed.append(out.out + out.err)
    for fmt in ("md", "jsonl"):
        written = tmp_path / f"export.{fmt}"
        assert main(["sessions", "export", str(session.id), "--output", str(written)]) == 0
        printed.append(written.read_text(encoding="utf-8"))

    assert [text for text in printed if STORED_KEY[:8] in text or STORED_KEY[-8:] in text] == []
    assert all("[redacted]" in text for text in printed)  # each had the key to print, in its place
    assert "Upstream failure for credential [redacted] (retry later)" in printed[0]
    assert (
        json.loads(printed[1])[0]["reason"]
        == "curator fell back: Upstream failure for credential [redacted] (retry later)"
    )
