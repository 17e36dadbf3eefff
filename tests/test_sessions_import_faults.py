"""Importing and exporting bad input: a bad line named, one transaction, control characters
escaped, the store unchanged by an export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessions import exchange, importing
from sessions.store import SqliteChatStore
from sessions.transcript import TranscriptError
from tests.test_sessions_exchange import RICH_SESSION, Planned, build, everything, export_to

# --- building sessions through the store's ordinary API (not the code under test) -------------------


# --- bad input -------------------------------------------------------------------------------------

GOOD = '{"id": "a", "role": "user", "content": "fine"}'


@pytest.mark.parametrize(
    ("bad_line", "said"),
    [
        # not JSON at all
        ('{"id": "b", "role": "user"', "invalid JSON"),
        # a field an export adds, with a value it never writes
        ('{"id": "b", "role": "user", "content": "x", "status": "done"}', "status must be one of"),
        ('{"id": "b", "role": "user", "content": "x", "state": "gone"}', "state must be one of"),
        ('{"id": "b", "role": "user", "content": "x", "tokens": -3}', "tokens"),
        ('{"id": "b", "role": "user", "content": "x", "forgotten": "yes"}', "forgotten"),
        ('{"id": "b", "role": "user", "content": "x", "session": {"title": 3}}', "session.title"),
        ('{"id": "b", "role": "user", "content": "x", "session": {"title": "\\ud800"}}', "lone surrogate"),
        # a time that is not one
        ('{"id": "b", "role": "user", "content": "x", "created_at": "yesterday"}', "created_at"),
        # the same id twice
        ('{"id": "a", "role": "user", "content": "again"}', "was used before"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_imported(
    store: SqliteChatStore, tmp_path: Path, bad_line: str, said: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{GOOD}\n\n{bad_line}\n", encoding="utf-8")
    with pytest.raises(TranscriptError) as caught:
        store.import_session(importing.open_session_file(path))
    assert f"'{path}', line 3:" in str(caught.value)
    assert said in str(caught.value)
    assert store.list_sessions() == []


def test_the_import_is_one_transaction(store: SqliteChatStore, tmp_path: Path) -> None:
    """A failure part-way (here: a trigger refusing the third message) leaves no half session."""
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(json.dumps({"id": str(n), "role": "user", "content": f"m{n}"}) + "\n" for n in range(5))
    )
    source = importing.open_session_file(path)
    with store._lock:
        store._conn.execute(
            "CREATE TEMP TRIGGER refuse BEFORE INSERT ON messages WHEN new.content = 'm2'"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    with pytest.raises(Exception, match="refused"):
        store.import_session(source)
    assert store.list_sessions() == []
    with store._lock:
        assert store._conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0


def test_raw_c1_controls_are_escaped_in_the_transcript(store: SqliteChatStore) -> None:
    session_id = build(store, "s", [Planned("user", "a\x9b31mb\x7f")])
    text = exchange.to_jsonl(store.dump_session(session_id))
    assert "\x9b" not in text and "\x7f" not in text
    assert json.loads(text)["content"] == "a\x9b31mb\x7f"


def test_exporting_changes_nothing_in_the_store(store: SqliteChatStore, tmp_path: Path) -> None:
    session_id = build(store, "s", RICH_SESSION)
    before = everything(store, session_id)
    export_to(store, session_id, tmp_path / "s.jsonl")
    exchange.to_markdown(store.dump_session(session_id))
    assert everything(store, session_id) == before
