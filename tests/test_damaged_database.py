"""A damaged database file: moved aside, explained, and a fresh one used; damage found while
reading is called damage."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from engine.errors import StoreError
from sessions import paths
from sessions.store import SqliteChatStore, open_store

# --- a damaged database ------------------------------------------------------------------------


def _truncated_database(path: Path, *, keep_third: bool = False) -> bytes:
    """A real Heedful database cut short mid-page, as an interrupted copy leaves it; with
    ``keep_third``, only its first third is left."""
    store = SqliteChatStore(path)
    session = store.create_session("old")
    for n in range(100):
        store.add_message(session.id, "user", f"old message {n} " * 40)
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3 if keep_third else len(data) - 1000])
    return path.read_bytes()


def _garbage_database(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8000)
    return path.read_bytes()


async def test_a_truncated_database_is_moved_aside_the_app_says_where_and_works_on_a_fresh_one() -> None:
    from tests.apphelpers import make_app, send, stored_messages, toasts, views, wait_for

    database = paths.database_path()
    damaged = _truncated_database(database)
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        (aside,) = database.parent.glob("heedful.db.corrupt-*")
        await wait_for(pilot, lambda: any(str(aside) in t for t in toasts(app)))
        (said,) = [t for t in toasts(app) if str(aside) in t]
        assert "damaged" in said and str(database) in said
        await send(pilot, "a fresh start")
        assert "Offline model" in views(app)[1].message.content
    app.services.store.close()
    assert aside.read_bytes() == damaged  # kept exactly as it was, for recovery
    stored = stored_messages()
    assert len(stored) == 2 and (stored[0].role, stored[0].content) == ("user", "a fresh start")


def test_a_database_cut_mid_page_is_caught_on_open_not_read_as_garbage(tmp_path: Path) -> None:
    database = tmp_path / "heedful.db"
    damaged = _truncated_database(database)
    opened = open_store(database, clock=lambda: datetime(2026, 1, 2, 3, 4, 5))
    try:
        assert opened.notice is not None and "heedful.db.corrupt-20260102-030405" in opened.notice
        assert opened.store.list_sessions() == []
    finally:
        opened.store.close()
    assert (tmp_path / "heedful.db.corrupt-20260102-030405").read_bytes() == damaged


def test_a_database_cut_to_a_third_is_moved_aside_or_refused_in_words(db_path: Path) -> None:
    _truncated_database(db_path, keep_third=True)
    for companion in ("heedful.db-wal", "heedful.db-shm"):
        (db_path.parent / companion).unlink(missing_ok=True)

    try:
        opened = open_store(db_path)
    except StoreError as err:  # SQLite may also refuse it outright; it must say so in words
        assert str(db_path) in err.user_message
        return
    try:
        if opened.notice is None:
            # SQLite opened what was left; what it can read must still be sound or reported.
            opened.store.list_sessions()
        else:
            assert "moved to" in opened.notice
    except StoreError as err:
        assert str(db_path) in err.user_message
    finally:
        opened.store.close()


def test_a_second_damaged_database_in_the_same_second_does_not_overwrite_the_first(tmp_path: Path) -> None:
    database = tmp_path / "data" / "heedful.db"
    clock = lambda: datetime(2026, 1, 2, 3, 4, 5)  # noqa: E731
    first = _garbage_database(database)
    open_store(database, clock=clock).store.close()
    database.write_bytes(b"damaged again" * 100)
    opened = open_store(database, clock=clock)
    opened.store.close()
    kept = {p.name: p.read_bytes() for p in database.parent.glob("heedful.db.corrupt-*")}
    assert sorted(kept.values()) == sorted([first, b"damaged again" * 100])
    (second,) = [name for name, data in kept.items() if data != first]
    assert opened.notice is not None and str(database.parent / second) in opened.notice


def test_a_damaged_row_is_reported_as_damage_not_a_crash(tmp_path: Path) -> None:
    database = tmp_path / "heedful.db"
    store = SqliteChatStore(database)
    session = store.create_session("s")
    store.add_message(session.id, "user", "fine")
    conn = sqlite3.connect(database)
    conn.execute("UPDATE messages SET created_at = 'not a date'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="damaged") as caught:
        store.messages(session.id)
    assert str(database) in caught.value.user_message
    store.close()


def _damage_page_of(database: Path, name: str) -> None:
    """Overwrite the first page of table or index ``name`` with garbage; the file stays whole pages."""
    store = SqliteChatStore(database)
    session = store.create_session("old")
    for n in range(100):
        store.add_message(session.id, "user", f"old message {n} " * 40)
    store.close()
    conn = sqlite3.connect(database)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with database.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)


def test_damage_found_while_reading_is_called_damage_not_a_full_disk(tmp_path: Path) -> None:
    database = tmp_path / "heedful.db"
    _damage_page_of(database, "messages_by_session")  # not read on open: found on first use
    opened = open_store(database)
    try:
        assert opened.notice is None
        with pytest.raises(StoreError) as caught:
            opened.store.messages(1)
    finally:
        opened.store.close()
    said = caught.value.user_message
    assert "damaged" in said and str(database) in said and "move the file aside" in said
    assert "disk is full" not in said


def test_start_up_survives_a_damaged_settings_table() -> None:
    from cli.chat import build_services

    database = paths.database_path()
    _damage_page_of(database, "sqlite_autoindex_app_state_1")  # the theme is looked up here at start
    before = database.read_bytes()
    services, theme = build_services(env={})
    try:
        assert theme is None
        (said,) = [n.text for n in services.notices if str(database) in n.text]
        assert "damaged" in said and "Nothing you write now will be saved" in said
        session = services.store.create_session("in memory")  # the app can still be used
        services.store.add_message(session.id, "user", "kept until Heedful closes")
    finally:
        services.store.close()
    assert database.read_bytes() == before  # left for the user to move aside or recover
