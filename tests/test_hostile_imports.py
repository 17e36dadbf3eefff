"""Imports that fail in words (issue 33, items 6 and 7): dates out of range, dates already stored
out of range, huge files read in constant memory with a progress line, and a session longer than
the app curates staying usable."""

from __future__ import annotations

import io
import json
import sqlite3
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import main
from engine.curation import session_curations
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, make_sessions, toasts, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.held import curation_of
from tui.messages import ItemVerb


class Terminal(io.StringIO):
    """Standard error as a terminal."""

    def isatty(self) -> bool:
        return True


def transcript(path: Path, *lines: dict[str, object] | str) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def message(n: int, **fields: object) -> dict[str, object]:
    return {"id": str(n), "role": ("user", "assistant")[n % 2], "content": f"message {n}", **fields}


def stored_sessions() -> list[tuple[str, int]]:
    store = open_store(paths.database_path()).store
    try:
        return [(s.title, s.message_count) for s in store.list_sessions()]
    finally:
        store.close()


# --- item 6: dates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "when",
    [
        "9999-12-31T23:59:59-12:00",  # past the last moment datetime holds, once in UTC
        "0001-01-01T00:00:00+00:00",  # the first: no zone west of UTC can show it
        "1969-12-31T23:59:59+00:00",
        "2150-06-01T12:00:00Z",
    ],
)
def test_a_date_out_of_range_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], when: str
) -> None:
    # The first line's date is at the edge of the range, and kept: the second one is named.
    first = message(0, created_at="1970-01-01T13:00:00+13:00")
    path = transcript(tmp_path / "dated.jsonl", first, message(1, created_at=when))
    assert main(["sessions", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"line 2: created_at is out of range ('{when}')" in err
    assert "1970 to 2099" in err and "Traceback" not in err
    assert stored_sessions() == []


ZONES = ["UTC", "America/New_York", "Pacific/Kiritimati", "Etc/GMT+12"]
STORED_DATES = ["0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59.999999+00:00", "9999-12-31T23:59:59-12:00"]
"""Dates an import before this fix let in, and one past what UTC can hold: written straight into
the database."""


@pytest.fixture(params=ZONES)
def zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The process's local time zone, as ``TZ`` sets it."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


def session_with_stored_dates() -> int:
    texts = [f"note {n} about the lighthouse" for n in range(len(STORED_DATES) * 2)]
    session_id = make_sessions(("Old dates", texts))["Old dates"]
    with sqlite3.connect(paths.database_path()) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY id")]
        for message_id, when in zip(ids, STORED_DATES * 2, strict=True):
            conn.execute("UPDATE messages SET created_at = ? WHERE id = ?", (when, message_id))
        conn.execute(
            "UPDATE sessions SET created_at = ?, updated_at = ? WHERE id = ?",
            (STORED_DATES[0], STORED_DATES[1], session_id),
        )
    return session_id


def test_no_stored_date_breaks_listing_or_exporting_in_any_zone(
    zone: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = session_with_stored_dates()
    assert main(["sessions", "list"]) == 0
    assert "Old dates" in capsys.readouterr().out
    markdown, jsonl = tmp_path / "s.md", tmp_path / "s.jsonl"
    assert main(["sessions", "export", str(session_id), "--output", str(markdown)]) == 0
    assert main(["sessions", "export", str(session_id), "--output", str(jsonl)]) == 0
    assert markdown.read_text(encoding="utf-8").count("\n## ") == len(STORED_DATES) * 2
    # What was exported imports again: the dates were read back within the range.
    assert main(["sessions", "import", str(jsonl)]) == 0, capsys.readouterr().err
    assert [count for _, count in stored_sessions()] == [len(STORED_DATES) * 2] * 2


async def test_no_stored_date_breaks_opening_the_session_in_any_zone(zone: str) -> None:
    session_with_stored_dates()
    app = make_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None and screen.settled, 20)
        assert len(screen.message_list.mounted) == len(STORED_DATES) * 2
        assert len(screen.context.items) == len(STORED_DATES) * 2 if screen.context else False
        assert not [t for t in toasts(app) if "wrong" in t], toasts(app)


# --- item 7: huge imports --------------------------------------------------------------------------


def test_an_import_shows_its_progress_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sessions.importing.BATCH", 2)
    path = transcript(tmp_path / "five.jsonl", *(message(n) for n in range(5)))
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["sessions", "import", str(path)]) == 0
    shown = terminal.getvalue()
    assert "\rImporting: 2 messages…\rImporting: 4 messages…\rImporting: 5 messages…" in shown
    assert shown.endswith("\r\x1b[K")  # rubbed out before the summary
    assert "Imported 5 messages" in capsys.readouterr().out
    store = open_store(paths.database_path()).store
    try:  # inserted many rows to a statement, every message is found by search all the same
        assert sorted(hit.text for hit in store.search("message")) == [f"message {n}" for n in range(5)]
    finally:
        store.close()
    # Not on a terminal (a log, a pipe): no progress line.
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert main(["sessions", "import", str(path)]) == 0
    assert "Importing" not in __import__("sys").stderr.getvalue()


@pytest.mark.parametrize(
    ("bad", "line", "said"),
    [
        ('{"id": "x", "role": "robot", "content": "?"}', 8, "role must be one of"),
        (message(2), 8, "the id '2' was used before"),  # repeats an id from an earlier batch
        (message(6), 8, "the id '6' was used before"),  # and from its own batch
        # found a batch at a time, yet named before a later line that is not JSON, read first
        (json.dumps(message(6)) + "\n{not JSON", 8, "the id '6' was used before"),
    ],
)
def test_a_bad_line_after_some_batches_leaves_nothing_behind(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    bad: dict[str, object] | str,
    line: int,
    said: str,
) -> None:
    monkeypatch.setattr("sessions.importing.BATCH", 3)
    lines = [*(message(n) for n in range(7)), bad, *(message(n) for n in range(10, 14))]
    path = transcript(tmp_path / "late.jsonl", *lines)
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["sessions", "import", str(path)]) == 2
    shown = terminal.getvalue()
    assert "\rImporting: 6 messages…\r\x1b[K" in shown  # two batches went in, then were undone
    assert f"'{path}', line {line}: {said}" in shown and "Traceback" not in shown
    assert stored_sessions() == []
    with sqlite3.connect(paths.database_path()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0


def test_an_import_takes_the_memory_of_a_batch_not_of_the_file(tmp_path: Path) -> None:
    """Python's own allocations while importing 20,000 messages (2.6 MB of transcript): the file
    is read a line at a time and inserted a batch at a time, so the peak does not grow with it."""
    small = transcript(tmp_path / "small.jsonl", message(0))
    assert main(["sessions", "import", str(small)]) == 0  # the code is imported, the store made
    path = transcript(
        tmp_path / "big.jsonl",
        *(
            message(n, created_at="2025-01-01T00:00:00+00:00", content=f"{n} " + "x" * 60)
            for n in range(20_000)
        ),
    )
    tracemalloc.start()
    try:
        assert main(["sessions", "import", str(path)]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000, f"{peak / 1e6:.1f} MB"


# --- item 7: a session longer than the app curates -------------------------------------------------


def long_session(messages: int) -> tuple[int, list[int]]:
    """A session of ``messages`` messages, each naming its own turn; its id and the message ids."""
    texts = [f"turn {n // 2} talks about crane{n}" for n in range(messages)]
    session_id = make_sessions(("Long", texts))["Long"]
    store = open_store(paths.database_path()).store
    try:
        return session_id, [m.id for m in store.messages(session_id)]
    finally:
        store.close()


def test_only_the_latest_messages_are_curated_with_the_turns_numbered_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine.curation.session_curations import SessionCurations
    from engine.text.tokens import LazyTokenCounter, load_counter

    session_id, ids = long_session(100)
    store = open_store(paths.database_path()).store
    counter = LazyTokenCounter(lambda: load_counter("gpt-4"))
    try:
        whole = curation_of(
            SessionCurations(store, counter, window=lambda: 100_000, system_prompt=""), session_id
        )
        monkeypatch.setattr(session_curations, "CURATED_LIMIT", 30)
        cut = curation_of(
            SessionCurations(store, counter, window=lambda: 100_000, system_prompt=""), session_id
        )
    finally:
        store.close()
    assert [i.id for i in cut.items] == ids[-30:]
    # Turn numbers go on from the turns left out, as when the session was curated whole.
    assert [i.turn for i in cut.items] == [i.turn for i in whole.items[-30:]]
    assert cut.turn == whole.turn == 50


async def test_a_session_too_long_to_curate_says_so_and_sends_at_once(
    monkeypatch: pytest.MonkeyPatch, fake_server: FakeOpenAIServer
) -> None:
    monkeypatch.setattr(session_curations, "CURATED_LIMIT", 30)
    _, ids = long_session(100)
    fake_server.reply = "Noted."
    app = make_app(base_url=fake_server.base_url, model="gpt-4o-mini")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None and screen.settled, 20)
        await wait_for(
            pilot, lambda: bool(screen.query("#context-note"))
        )  # the panel's parts: after the first frame
        said = (
            "Only the latest 30 messages of this session, and those you pinned, are curated and sent "
            "from: the 70 others"
        )
        assert screen.context is not None and any(said in note for note in screen.context.notes)
        assert said in str(screen.query_one("#context-note").render())
        assert any("their standing instructions hold" in note for note in screen.context.notes)
        told = "are told in the story so far (the latest 70)"
        await wait_for(
            pilot, lambda: screen.context is not None and any(told in n for n in screen.context.notes)
        )

        screen.composer.insert("what did turn 49 say about crane99?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(fake_server.requests) == 1 and screen.settled, 20)
        messages = fake_server.requests[0]["body"]["messages"]
        conversation = json.dumps([m for m in messages if m["role"] != "system"])
        assert "crane99" in conversation and "crane69" not in conversation  # none before the cut whole
        # The story so far tells the messages before the cut.
        story = next(m["content"] for m in messages if m["content"].startswith("The story so far"))
        assert "turn 0 talks about crane0" in story and "crane69" in story and "crane99" not in story
        assert screen.context is not None and screen.context.turn == 51

        # A message before the cut is in the store, not in the curation: pinning it is explained.
        screen.context_actions.run(ItemVerb.PIN, ids[0])
        await wait_for(pilot, lambda: any("older than the latest 30 messages" in t for t in toasts(app)))


async def test_a_message_pinned_before_the_cut_is_shown_pinned_and_can_be_unpinned(
    monkeypatch: pytest.MonkeyPatch, fake_server: FakeOpenAIServer
) -> None:
    from engine.curation.context_service import ContextService
    from engine.curation.session_curations import SessionCurations
    from engine.text.tokens import LazyTokenCounter, load_counter

    session_id, ids = long_session(100)
    store = open_store(paths.database_path()).store
    try:
        curations = SessionCurations(
            store, LazyTokenCounter(lambda: load_counter("gpt-4")), window=lambda: 100_000, system_prompt=""
        )
        await ContextService(curations).pin(session_id, ids[0])  # while the session was curated whole
    finally:
        store.close()
    monkeypatch.setattr(session_curations, "CURATED_LIMIT", 30)
    app = make_app(base_url=fake_server.base_url, model="gpt-4o-mini")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None and screen.settled, 20)

        def pinned() -> list[bool]:
            return [i.pinned for i in screen.context.items if i.id == ids[0]] if screen.context else []

        assert pinned() == [True]
        assert screen.context is not None and any("the 69 others stay" in n for n in screen.context.notes)
        screen.context_actions.run(ItemVerb.PIN, ids[0])  # unpins
        await wait_for(pilot, lambda: pinned() != [True])
        assert not any("older than the latest" in t for t in toasts(app))
