"""Export and import (sessions/exchange.py): a session survives export → import exactly, the
Markdown export reads as a conversation, replay reads an export, and a bad file is refused by line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.replay import replay
from engine.chat import ROLES, MessageStatus, Role
from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.curation.ledger import LedgerEntry
from engine.protocols.store import ItemRecord
from sessions import exchange, importing
from sessions.store import SqliteChatStore

# --- building sessions through the store's ordinary API (not the code under test) -------------------


@dataclass(frozen=True)
class Planned:
    """One message to create, with what the app would later have decided about it."""

    role: Role
    content: str
    status: MessageStatus = MessageStatus.COMPLETE
    tokens: int | None = None
    model: str | None = None
    error: str | None = None
    record: tuple[ItemState, bool, bool, str | None, bool] | None = None
    """(state, pinned, kept_by_user, summary, forgotten), or None for no curation record."""


def build(
    store: SqliteChatStore,
    title: str,
    plan: list[Planned],
    *,
    policy: ConsentChoice | None = None,
    saved: int = 0,
    settings_row: tuple[str | None, str | None, str | None, float | None] = (None, None, None, None),
    keep_rules: tuple[str, ...] = (),
) -> int:
    session = store.create_session(title)
    for text in keep_rules:
        store.add_keep_rule(session.id, text, LedgerEntry.keep_rule(0, text, added=True))
    records = []
    for item in plan:
        stored = store.add_message(session.id, item.role, item.content, tokens=item.tokens, model=item.model)
        if item.status != MessageStatus.COMPLETE or item.error is not None:
            store.update_message(stored.id, status=item.status, error=item.error)
        if item.record is not None:
            records.append(ItemRecord(stored.id, *item.record))
    store.save_curation(
        session.id,
        items=records,
        entities=[],
        ledger=[],
        policy=policy,
        policy_changed=True,
        saved_tokens=saved,
    )
    if any(value is not None for value in settings_row):
        with store._lock:  # the per-session settings have no store API of their own yet
            store._conn.execute(
                "UPDATE sessions SET system_prompt = ?, model = ?, profile = ?, temperature = ? WHERE id = ?",
                (*settings_row, session.id),
            )
    return session.id


def everything(store: SqliteChatStore, session_id: int) -> dict[str, object]:
    """All a session holds that an export promises to carry, with message ids replaced by position."""
    messages = store.messages(session_id)
    snapshot = store.load_curation(session_id)
    position = {m.id: n for n, m in enumerate(messages)}
    with store._lock:
        row = store._conn.execute(
            "SELECT title, system_prompt, model, profile, temperature FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
    return {
        "session": tuple(row),
        "policy": snapshot.policy,
        "saved": snapshot.saved_tokens,
        "keep rules": [rule.text for rule in store.keep_rules(session_id)],
        "messages": [
            (m.role, m.content, m.status, m.created_at, m.tokens, m.model, m.error) for m in messages
        ],
        "records": {
            position[i]: (r.state, r.pinned, r.kept_by_user, r.summary, r.forgotten)
            for i, r in snapshot.items.items()
        },
    }


def transcript_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def export_to(store: SqliteChatStore, session_id: int, path: Path) -> Path:
    path.write_text(exchange.to_jsonl(store.dump_session(session_id)), encoding="utf-8")
    return path


@pytest.fixture
def other(tmp_path: Path) -> Iterator[SqliteChatStore]:
    opened = SqliteChatStore(tmp_path / "b" / "heedful.db")
    yield opened
    opened.close()


RICH_SESSION = [
    Planned("system", "You are terse."),
    Planned("user", "The deploy fails with ConnectionRefusedError on port 5432.", tokens=14),
    Planned(
        "assistant",
        "Check `max_connections`.",
        tokens=6,
        model="gpt-4o-mini",
        record=(ItemState.SUMMARIZED, False, False, "Advice: check max_connections (#3).", False),
    ),
    Planned("assistant", "An earlier try", status=MessageStatus.SUPERSEDED, model="gpt-4o-mini"),
    Planned(
        "user",
        "Pin this: DATABASE_URL=postgres://db/prod",
        record=(ItemState.ACTIVE, True, False, None, False),
    ),
    Planned("assistant", "Half a rep", status=MessageStatus.INTERRUPTED, error="You stopped this reply."),
    Planned("assistant", "", status=MessageStatus.FAILED, error="The server failed (500)."),
    Planned("user", "Forget the cat story", record=(ItemState.PRUNED, False, True, None, True)),
    Planned(
        "tool",
        "output of ls\n\x1b[31mred\x1b[0m \x9b1m \x00 nul",
        record=(ItemState.ACTIVE, False, False, None, False),
    ),
    Planned("user", "Ünïcödé, emoji 🐈 and a «quote» [bold]not markup[/]"),
]


def test_export_then_import_gives_the_session_back_exactly(
    store: SqliteChatStore, other: SqliteChatStore, tmp_path: Path
) -> None:
    session_id = build(
        store,
        "Debugging the deploy",
        RICH_SESSION,
        policy=ConsentChoice.SUMMARIZE,
        saved=1234,
        settings_row=("Answer in French.", "gpt-4o", "quality", 0.3),
        keep_rules=("the database schema", "anything about \x1b]52;c;cHduZWQ=\x07 billing"),
    )
    first = export_to(store, session_id, tmp_path / "first.jsonl")
    assert "\x1b" not in first.read_text(encoding="utf-8")  # a rule's text is written escaped too

    for target in (other, store):  # into another database, and next to the original
        imported = target.import_session(importing.open_session_file(first))
        assert everything(target, imported.session_id) == everything(store, session_id)
        # The transcript ids are kept: exporting the copy writes the same file, byte for byte.
        again = export_to(target, imported.session_id, tmp_path / "again.jsonl")
        assert again.read_bytes() == first.read_bytes()
        originals = [str(m.id) for m in store.messages(session_id)]
        assert transcript_ids(again) == originals
        assert imported.messages == len(originals)


def test_a_message_written_after_an_import_never_takes_an_imported_id(
    store: SqliteChatStore, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"id": "3", "role": "user", "content": "a"}\n{"id": "4", "role": "user", "content": "b"}\n'
    )
    imported = store.import_session(importing.open_session_file(path))  # rows 1 and 2
    for n in range(2):
        store.add_message(imported.session_id, "user", f"new {n}")  # rows 3 and 4
    ids = transcript_ids(export_to(store, imported.session_id, tmp_path / "out.jsonl"))
    assert ids == ["3", "4", "3-2", "4-2"]
    again = store.import_session(importing.open_session_file(tmp_path / "out.jsonl"))
    assert [m.content for m in store.messages(again.session_id)] == ["a", "b", "new 0", "new 1"]


def test_a_plain_transcript_imports_with_its_ids_pins_and_times(
    store: SqliteChatStore, tmp_path: Path
) -> None:
    path = tmp_path / "conv-26.jsonl"
    rows = [
        {
            "id": "D1:1",
            "role": "user",
            "name": "Caroline",
            "content": "Hey Mel!",
            "created_at": "2023-05-08T13:56:00",
        },
        {
            "id": "D1:2",
            "role": "assistant",
            "content": "Hi!",
            "pinned": True,
            "created_at": "2023-05-08T14:00:00+02:00",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    imported = store.import_session(importing.open_session_file(path))

    session = store.get_session(imported.session_id)
    assert session is not None and session.title == "conv-26"  # no title recorded: the file's name
    messages = store.messages(imported.session_id)
    assert [m.content for m in messages] == ["Hey Mel!", "Hi!"]
    assert [m.created_at.isoformat() for m in messages] == [
        "2023-05-08T13:56:00+00:00",
        "2023-05-08T12:00:00+00:00",
    ]
    records = store.load_curation(imported.session_id).items
    assert set(records) == {messages[1].id} and records[messages[1].id].pinned
    # The import says, in the ledger, why the pinned message is pinned.
    (entry,) = store.ledger(imported.session_id)
    assert entry.target == str(messages[1].id) and "imported from conv-26.jsonl" in entry.reason
    assert transcript_ids(export_to(store, imported.session_id, tmp_path / "out.jsonl")) == ["D1:1", "D1:2"]


def test_a_reply_exported_while_streaming_comes_back_interrupted(
    store: SqliteChatStore, tmp_path: Path
) -> None:
    session_id = build(
        store, "s", [Planned("user", "hi"), Planned("assistant", "Hal", status=MessageStatus.STREAMING)]
    )
    path = export_to(store, session_id, tmp_path / "s.jsonl")
    imported = store.import_session(importing.open_session_file(path))
    reply = store.messages(imported.session_id)[1]
    assert (reply.content, reply.status) == ("Hal", MessageStatus.INTERRUPTED)
    assert reply.error == exchange.INTERRUPTED_ON_EXPORT


# --- property: any session round-trips ---------------------------------------------------------------

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
_records = st.none() | st.tuples(
    st.sampled_from(list(ItemState)), st.booleans(), st.booleans(), st.none() | _text, st.booleans()
)
_messages = st.builds(
    Planned,
    role=st.sampled_from(ROLES),
    content=_text,
    status=st.sampled_from([s for s in MessageStatus if s != MessageStatus.STREAMING]),
    tokens=st.none() | st.integers(0, 10**6),
    model=st.none() | _text,
    error=st.none() | _text,
    record=_records,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_text.filter(str.strip),
    plan=st.lists(_messages, min_size=1, max_size=12),
    # What a session may remember for all: never attach, which answers one message.
    policy=st.none() | st.sampled_from([ConsentChoice.KEEP, ConsentChoice.SUMMARIZE, ConsentChoice.REMOVE]),
    saved=st.integers(0, 10**9),
    temperature=st.none() | st.floats(0, 2, allow_nan=False),
)
def test_any_session_round_trips_exactly(
    tmp_path_factory: pytest.TempPathFactory,
    title: str,
    plan: list[Planned],
    policy: ConsentChoice | None,
    saved: int,
    temperature: float | None,
) -> None:
    folder = tmp_path_factory.mktemp("roundtrip")
    source, target = SqliteChatStore(folder / "a.db"), SqliteChatStore(folder / "b.db")
    try:
        session_id = build(
            source, title, plan, policy=policy, saved=saved, settings_row=(None, None, None, temperature)
        )
        path = export_to(source, session_id, folder / "s.jsonl")
        imported = target.import_session(importing.open_session_file(path))
        assert everything(target, imported.session_id) == everything(source, session_id)
        assert export_to(target, imported.session_id, folder / "t.jsonl").read_bytes() == path.read_bytes()
    finally:
        source.close()
        target.close()


def test_an_empty_session_exports_to_an_empty_file_and_imports_under_the_files_name(
    store: SqliteChatStore, tmp_path: Path
) -> None:
    path = export_to(store, store.create_session("nothing yet").id, tmp_path / "empty.jsonl")
    assert path.read_text() == ""
    imported = store.import_session(importing.open_session_file(path))
    session = store.get_session(imported.session_id)
    assert session is not None and (session.title, session.message_count) == ("empty", 0)


# --- replay reads an export ------------------------------------------------------------------------


def test_replay_reads_an_export_and_leaves_out_what_the_app_never_sends(
    store: SqliteChatStore, tmp_path: Path
) -> None:
    session_id = build(store, "s", RICH_SESSION)
    path = export_to(store, session_id, tmp_path / "s.jsonl")
    out = replay(
        path, context_window=4000, budget_ratio=None, profile="balanced", consent="keep", probes=None
    )
    sent = json.dumps(out["final"])
    assert "An earlier try" not in sent  # superseded
    assert "DATABASE_URL" in sent
    in_conversation = [
        m for m in RICH_SESSION if m.status not in (MessageStatus.SUPERSEDED, MessageStatus.FAILED)
    ]
    assert out["messages"] == len(in_conversation)
    pinned = [m for m in json.loads(sent)["messages"] if "DATABASE_URL" in m["content"]]
    assert pinned and pinned[0]["sources"] == [str(store.messages(session_id)[4].id)]


# --- Markdown ----------------------------------------------------------------------------------------


def test_markdown_has_a_heading_per_message_with_who_when_and_marks(store: SqliteChatStore) -> None:
    plan = [*RICH_SESSION, Planned("assistant", "```python\nprint('unclosed')")]
    session_id = build(store, "Debugging the deploy", plan, keep_rules=("the database schema",))
    text = exchange.to_markdown(store.dump_session(session_id))
    ids = [m.id for m in store.messages(session_id)]

    assert text.startswith(
        "# Debugging the deploy\n\n10 messages · exported from Heedful\n"
        "\nKept by your rules (/keep):\n\n- the database schema\n"
    )
    headings = re.findall(r"^## (.*)$", text, flags=re.MULTILINE)
    shown = [n for n, m in enumerate(plan) if m.status != MessageStatus.SUPERSEDED]
    assert len(headings) == len(shown) == 10
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d"
    for heading, n in zip(headings, shown, strict=True):
        assert re.match(rf"^\w+( \([^)]*\))? · {when}\b.* · #{ids[n]}\b", heading), heading
    assert headings[0].startswith("System · ") and headings[1].startswith("You · ")
    assert headings[2].startswith("Assistant (gpt-4o-mini) · ") and headings[2].endswith("≈ summarized")
    assert headings[3].endswith("📌 pinned")
    assert headings[4].endswith("⚠ interrupted") and headings[5].endswith("✗ failed")
    assert headings[6].endswith("✂ pruned · forgotten · kept by you")
    assert "An earlier try" not in text  # the chat does not show superseded replies either
    assert "> **Sent to the model as this summary:**\n>\n> Advice: check max_connections (#3).\n" in text
    assert "*You stopped this reply.*" in text and "*(no text)*" in text
    assert text.endswith("print('unclosed')\n```\n")  # the fence is closed so nothing after it is swallowed
