"""A long session's user messages before the curated cut are read for standing instructions once:
the store keeps how far they were read and which state one, and reopening reads only the rest."""

from __future__ import annotations

import hashlib
import inspect
import sqlite3
from collections.abc import Iterator

import pytest

from engine.chat import MessageStatus
from engine.curation import stored
from engine.curation.budget import DEFAULT_PROFILE
from engine.curation.session_curation import SessionCuration
from engine.protocols.store import StandingScan
from engine.standing import recognise
from engine.standing.recognise import RECOGNISER_VERSION
from engine.text.tokens import load_counter
from sessions import paths
from sessions.store import SqliteChatStore, open_store
from tests.apphelpers import make_sessions

KEEP = 100
"""Messages curated: the rest of the session is before the cut."""
SAID = "From now on, always answer in French."
RECOGNISER_SOURCES = {1: "056e1cf30059ff0d"}
"""Each recogniser version's source (engine/standing/recognise.py), fingerprinted."""


@pytest.fixture
def store() -> Iterator[SqliteChatStore]:
    opened = open_store(paths.database_path()).store
    yield opened
    opened.close()


def session_saying(statement: str, filler: int) -> int:
    """A session whose first message states ``statement``, then ``filler`` messages of chat."""
    said = [statement] + [f"turn {n // 2} talks about crane{n}." for n in range(filler)]
    return make_sessions(("Long", said))["Long"]


def read_whole(store: SqliteChatStore, session_id: int) -> tuple[SessionCuration, list[int]]:
    """The session's curation read whole (cut at :data:`KEEP`), and where each page of user
    messages read for standing instructions began (a page is at most 500)."""
    began: list[int] = []
    pages = store.user_openings

    def user_openings(
        session_id: int, *, after: int, upto: int, chars: int, limit: int
    ) -> list[tuple[int, str]]:
        page = pages(session_id, after=after, upto=upto, chars=chars, limit=limit)
        if page:
            began.append(after)
        return page

    store.user_openings = user_openings  # type: ignore[method-assign]
    try:
        cut = store.history_cut(session_id, KEEP)
        curation = stored.read_session(
            store, session_id, cut, window=100_000, counter=load_counter("gpt-4"), profile=DEFAULT_PROFILE
        )
    finally:
        del store.user_openings
    return curation, began


def current(curation: SessionCuration) -> list[str]:
    return [s.text for s in curation.state.standing.entries() if s.current]


def test_reopening_reads_only_the_messages_said_since_and_the_statement_still_holds(
    store: SqliteChatStore,
) -> None:
    session_id = session_saying(SAID, 149)
    first, began = read_whole(store, session_id)
    assert current(first) == [SAID] and began == [0], "the first read reads every user message"
    cut = store.history_cut(session_id, KEEP)
    assert cut is not None
    statement_id = store.messages(session_id)[0].id
    assert store.standing_scan(session_id, RECOGNISER_VERSION) == StandingScan(cut.after, (statement_id,))

    for n in range(40):
        store.add_message(session_id, ("user", "assistant")[n % 2], f"later turn about heron{n}.")
    again, began = read_whole(store, session_id)
    assert current(again) == [SAID]
    assert began == [cut.after], "only the user messages after the last read are read"
    moved = store.history_cut(session_id, KEEP)
    assert moved is not None and moved.after > cut.after
    assert store.standing_scan(session_id, RECOGNISER_VERSION) == StandingScan(moved.after, (statement_id,))

    _, began = read_whole(store, session_id)
    assert began == [], "nothing new before the cut: nothing read"


def test_a_scan_by_another_version_of_the_recogniser_is_made_again(
    store: SqliteChatStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = session_saying(SAID, 149)
    read_whole(store, session_id)
    monkeypatch.setattr(stored, "RECOGNISER_VERSION", RECOGNISER_VERSION + 1)
    curation, began = read_whole(store, session_id)
    assert began == [0] and current(curation) == [SAID]


def test_a_statement_whose_message_was_replaced_since_the_scan_no_longer_holds(
    store: SqliteChatStore,
) -> None:
    session_id = session_saying(SAID, 149)
    read_whole(store, session_id)
    store.update_message(store.messages(session_id)[0].id, status=MessageStatus.SUPERSEDED)
    curation, _ = read_whole(store, session_id)
    assert current(curation) == []


def test_the_recogniser_is_not_changed_without_a_word_on_its_version() -> None:
    """Stored scans skip the messages that stated nothing by this version's reading: one that
    recognises more must have a new version, or those messages would never be read again."""
    source = hashlib.sha256(inspect.getsource(recognise).encode()).hexdigest()[:16]
    assert RECOGNISER_SOURCES.get(RECOGNISER_VERSION) == source, (
        "engine/standing/recognise.py changed: if it may recognise a statement it did not before, "
        f"bump RECOGNISER_VERSION; either way record {source!r} for it in RECOGNISER_SOURCES"
    )


def test_openings_read_by_id_are_the_users_messages_in_the_conversation(store: SqliteChatStore) -> None:
    session_id = session_saying(SAID, 9)
    messages = store.messages(session_id)
    store.update_message(messages[2].id, status=MessageStatus.SUPERSEDED)
    unknown = list(range(10**6, 10**6 + 600))  # more than one query's worth of ids
    assert store.openings(session_id, unknown + [m.id for m in messages], chars=12) == [
        (m.id, m.content[:12]) for m in messages if m.role == "user" and m is not messages[2]
    ]


def test_a_damaged_scan_is_made_again(store: SqliteChatStore) -> None:
    session_id = session_saying(SAID, 149)
    read_whole(store, session_id)
    with sqlite3.connect(paths.database_path()) as damage:
        damage.execute("UPDATE standing_scans SET said = 'x,#' WHERE session_id = ?", (session_id,))
    curation, began = read_whole(store, session_id)
    assert current(curation) == [SAID] and began == [0]
    assert store.standing_scan(session_id, RECOGNISER_VERSION) is not None
