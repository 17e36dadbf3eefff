"""Memory from the chat: /remember, /memory, leaving a session, and a session left idle."""

from __future__ import annotations

import sqlite3

from engine.memory.memories import Memory
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, send, toasts, type_command, wait_for, write_config
from tui.screens.memory import MemoryScreen

DECISION = "We decided to deploy on Fridays at 17:00 and I prefer blue-green releases."


def memories() -> list[Memory]:
    store = open_store(paths.database_path()).store
    try:
        return store.list_memories()
    finally:
        store.close()


async def test_remember_writes_a_memory_and_memory_lists_it() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await send(pilot, DECISION)
        await type_command(pilot, app, "/remember")
        await wait_for(pilot, lambda: any("Remembered" in t for t in toasts(app)))
        (memory,) = memories()
        assert "Fridays" in memory.summary or "deploy" in memory.summary
        await type_command(pilot, app, "/remember")
        await wait_for(pilot, lambda: any("Nothing new" in t for t in toasts(app)))
        assert len(memories()) == 1
        await type_command(pilot, app, "/memory")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen))


async def test_leaving_a_session_remembers_it_without_asking() -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, DECISION)
        assert memories() == []
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: len(memories()) == 1)
        assert chat(app).session is None


async def test_a_session_left_idle_is_remembered_by_itself() -> None:
    write_config("[memory]\ninactivity_minutes = 0.01\n")  # 0.6 s
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, DECISION)
        await wait_for(pilot, lambda: len(memories()) == 1, 10)
        await wait_for(pilot, lambda: any("Remembered" in t for t in toasts(app)))


async def test_a_deleted_session_is_not_remembered() -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, DECISION)
        session_id = chat(app).session.id  # type: ignore[union-attr]
        store = app.services.store
        store.trash_session(session_id)  # type: ignore[attr-defined]  # as the picker's delete does (undoable)
        await type_command(pilot, app, "/remember")
        await wait_for(pilot, lambda: any("Nothing new" in t for t in toasts(app)))
    assert memories() == []


async def test_a_session_idle_since_the_last_run_is_remembered_when_the_app_opens_it() -> None:
    from datetime import UTC, datetime, timedelta

    store = open_store(paths.database_path()).store
    try:
        session = store.create_session("last week")
        store.add_message(session.id, "user", DECISION)
        store.add_message(session.id, "assistant", "Noted: Fridays at 17:00, blue-green.")
    finally:
        store.close()
    old = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    with sqlite3.connect(paths.database_path()) as conn:  # as if written two days ago
        conn.execute("UPDATE messages SET created_at = ?", (old,))
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: len(memories()) == 1)
