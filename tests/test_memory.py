"""Cross-session memory (issue 6): graduated expiry on an injected clock, start-up expiry,
remembering sessions into the store, and the memory section in a new session's request. (Choosing
memories, the offline assessment and the config: test_memory_selection.py.)"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.chat import build_services
from engine.chat import MessageStatus, PromptMessage, Role
from engine.errors import StoreError
from engine.memory.assessed import AssessedBy
from engine.memory.assessment import OfflineAssessor
from engine.memory.memories import Memory, expiry_for
from engine.memory.service import ASSESSED_CHARS, UNASSESSED_PAGE, MemoryService
from engine.turn.service import TurnService
from providers.offline import OfflineModel
from providers.openai_chat import OpenAIChatModel
from sessions import paths
from sessions.store import SqliteChatStore, open_store
from tests.memory_helpers import CHIT_CHAT, COUNTER, DECISIONS, T0, Clock


def add(
    store: SqliteChatStore, importance: float, when: datetime, *, summary: str = "", **kw: object
) -> Memory:
    """A memory written at ``when`` with the expiry the graduated rules give it."""
    return store.add_memory(
        None,
        summary=summary or f"memory of importance {importance}",
        importance=importance,
        now=when,
        expires_at=expiry_for(importance, when),
        **kw,  # type: ignore[arg-type]
    )


# --- graduated expiry --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("importance", "life"),
    [
        (1.0, None),
        (0.7, None),  # the boundary is permanent
        (0.6999, timedelta(days=30)),
        (0.5, timedelta(days=30)),  # the boundary gets a month
        (0.4999, timedelta(days=7)),
        (0.3, timedelta(days=7)),  # the boundary gets a week
        (0.2999, timedelta(days=3)),
        (0.0, timedelta(days=3)),
    ],
)
def test_expiry_is_graduated_by_importance_with_exact_boundaries(
    importance: float, life: timedelta | None
) -> None:
    expected = None if life is None else T0 + life
    assert expiry_for(importance, T0) == expected


async def test_memories_expire_exactly_when_their_life_ends_on_the_injected_clock(
    store: SqliteChatStore, memory: MemoryService, clock: Clock
) -> None:
    permanent = add(store, 0.8, T0)
    month = add(store, 0.5, T0)
    week = add(store, 0.3, T0)
    days = add(store, 0.1, T0)
    pinned = add(store, 0.0, T0)
    await memory.pin(pinned.id, True)

    def left() -> set[int]:
        return {m.id for m in store.list_memories()}

    clock.now = T0 + timedelta(days=3) - timedelta(microseconds=1)
    assert await memory.expire() == 0
    clock.now = T0 + timedelta(days=3)  # expiry is inclusive: at its time it is gone
    assert await memory.expire() == 1
    assert left() == {permanent.id, month.id, week.id, pinned.id}
    assert days.id not in left()
    clock.now = T0 + timedelta(days=7)
    assert await memory.expire() == 1
    assert week.id not in left()
    clock.now = T0 + timedelta(days=30)
    assert await memory.expire() == 1
    assert month.id not in left()
    clock.now = T0 + timedelta(days=3650)
    assert await memory.expire() == 0
    assert left() == {permanent.id, pinned.id}  # the pinned 0.0 memory never expires


async def test_unpinning_starts_the_expiry_again_from_now(
    store: SqliteChatStore, memory: MemoryService, clock: Clock
) -> None:
    kept = add(store, 0.4, T0)
    await memory.pin(kept.id, True)
    clock.advance(days=100)
    assert await memory.expire() == 0
    unpinned = await memory.pin(kept.id, False)
    assert unpinned.expires_at == clock.now + timedelta(days=7)
    clock.advance(days=7)
    assert await memory.expire() == 1


async def test_rating_a_memory_applies_the_rules_from_now(
    store: SqliteChatStore, memory: MemoryService, clock: Clock
) -> None:
    low = add(store, 0.1, T0)
    clock.advance(days=2)
    assert (await memory.rate(low.id, 0.9)).expires_at is None
    assert (await memory.rate(low.id, 0.5)).expires_at == clock.now + timedelta(days=30)
    with pytest.raises(ValueError, match="between 0 and 1"):
        await memory.rate(low.id, 1.5)


def test_start_up_removes_the_memories_that_expired_while_heedful_was_closed() -> None:
    database = paths.database_path()
    store = open_store(database).store
    old = datetime.now(UTC) - timedelta(days=4)  # written four days ago, on the injected clock
    try:
        gone = add(store, 0.2, old)  # 3 days: expired
        kept = add(store, 0.4, old)  # 7 days: not yet
        permanent = add(store, 0.9, old - timedelta(days=365))
    finally:
        store.close()
    services, _ = build_services(env={})
    try:
        left = {m.id for m in services.store.list_memories()}  # type: ignore[attr-defined]
        assert left == {kept.id, permanent.id}
        assert gone.id not in left
    finally:
        services.store.close()


# --- remember and the store -----------------------------------------------------------------------


def conversation(store: SqliteChatStore, messages: list[PromptMessage], session_id: int | None = None) -> int:
    sid = session_id if session_id is not None else store.create_session("test").id
    for message in messages:
        store.add_message(sid, message.role, message.content)
    return sid


async def test_remember_assesses_only_what_is_new_and_advances_memory_through(
    store: SqliteChatStore, memory: MemoryService, clock: Clock
) -> None:
    sid = conversation(store, DECISIONS)
    first = await memory.remember(sid)
    assert first.memory is not None and first.assessed is not None
    assert first.assessed.by is AssessedBy.HEURISTIC
    assert first.messages == len(DECISIONS)
    assert first.memory.importance >= 0.7 and first.memory.expires_at is None
    assert first.memory.session_id == sid and first.memory.created_at == clock.now
    assert store.memory_through(sid) == store.messages(sid)[-1].id
    assert "Remembered" in first.note

    again = await memory.remember(sid)
    assert again.memory is None and again.note == "Nothing new to remember in this session."
    conversation(store, CHIT_CHAT, sid)
    later = await memory.remember(sid)
    assert later.messages == len(CHIT_CHAT)
    assert later.memory is not None and later.memory.importance < 0.3
    assert len(store.list_memories()) == 2


async def test_everything_added_since_the_last_assessment_is_assessed_however_long(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    """What is new is read a page at a time from where the last assessment stopped."""
    sid = conversation(store, DECISIONS)
    await memory.remember(sid)
    count = UNASSESSED_PAGE + 20
    for n in range(count):
        store.add_message(sid, "user" if n % 2 == 0 else "assistant", f"We decided step {n} uses Postgres.")
    later = await memory.remember(sid)
    assert later.messages == count
    assert store.memory_through(sid) == store.messages(sid)[-1].id


async def test_a_very_long_stretch_is_assessed_by_its_most_recent_part_and_all_of_it_is_passed(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    sid = store.create_session("long").id
    text = "We decided the cache stays on Redis. " * 135  # about 5,000 characters
    ids = [store.add_message(sid, ("user", "assistant")[n % 2], f"{n}: {text}").id for n in range(60)]
    done = await memory.remember(sid)
    assert done.messages == ASSESSED_CHARS // len(f"10: {text}")  # the last ones that fit
    assert store.memory_through(sid) == ids[-1]  # not assessed again next time


async def test_a_long_session_is_read_back_only_as_far_as_its_assessment_looks(
    store: SqliteChatStore, memory: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 10,000-message session never assessed: reading it all to keep its last part took 0.38 s
    # of the interpreter while the session was opening.
    monkeypatch.setattr("engine.memory.service.ASSESSED_CHARS", 1_000)
    monkeypatch.setattr("engine.memory.service.UNASSESSED_PAGE", 20)
    sid = store.create_session("long").id
    roles: tuple[Role, Role] = ("user", "assistant")
    ids = [store.add_message(sid, roles[n % 2], f"{n:03}: " + "x" * 95).id for n in range(200)]
    pages: list[int] = []
    read_page = store.message_page

    def counted(*args: object, **kwargs: object) -> object:
        pages.append(1)
        return read_page(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "message_page", counted)
    done = await memory.remember(sid)
    assert done.messages == 10  # the last ten fit in 1,000 characters
    assert len(pages) == 1
    assert store.memory_through(sid) == ids[-1]


async def test_a_reply_still_streaming_is_left_for_the_next_assessment(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    sid = conversation(store, DECISIONS[:1])
    streaming = store.add_message(sid, "assistant", "half a rep", status=MessageStatus.STREAMING)
    done = await memory.remember(sid)
    assert done.messages == 1
    assert store.memory_through(sid) < streaming.id


async def test_the_offline_models_digests_are_not_remembered(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    """Its replies describe the request (counts, how to connect a model), not the conversation: a
    memory made of them would be noise in every later session's request."""
    turns = wired(store, OfflineModel(COUNTER, word_delay=0), memory)
    async for _ in turns.send(None, "We decided the billing API ships on 3 May 2025."):
        pass
    session = store.latest_session()
    assert session is not None
    async for _ in turns.send(session.id, "I prefer asyncpg over psycopg."):
        pass
    replies = [m for m in store.messages(session.id) if m.is_reply]
    assert len(replies) == 2 and all(m.is_digest for m in replies)

    done = await memory.remember(session.id)
    assert done.messages == 2  # the user's two messages, and neither digest
    assert done.memory is not None
    assert "asyncpg" in done.memory.summary and "3 May 2025" in done.memory.summary
    assert "Offline model" not in done.memory.summary and "offline" not in done.memory.tags
    assert store.memory_through(session.id) == replies[-1].id  # the digests are not assessed later either


async def test_idle_sessions_are_assessed_only_after_the_configured_inactivity(
    store: SqliteChatStore, clock: Clock
) -> None:
    service = MemoryService(store, OfflineAssessor(), COUNTER, clock=clock, inactivity_minutes=30)
    sid = conversation(store, DECISIONS)
    assert await service.on_idle(sid, 29 * 60 + 59) is None
    assert store.list_memories() == []
    done = await service.on_idle(sid, 30 * 60)
    assert done is not None and done.memory is not None


async def test_turned_off_memory_assesses_nothing_and_adds_no_section(
    store: SqliteChatStore, clock: Clock
) -> None:
    add(store, 0.9, T0)
    service = MemoryService(store, OfflineAssessor(), COUNTER, clock=clock, enabled=False)
    sid = conversation(store, DECISIONS)
    assert (await service.remember(sid)).memory is None
    assert await service.on_idle(sid, 10**6) is None
    assert service.section_for(None, 1_000) == ""


async def test_store_memory_methods_edit_and_delete_and_fail_as_store_errors(
    store: SqliteChatStore, memory: MemoryService, clock: Clock, db_path: Path
) -> None:
    kept = add(store, 0.6, T0, tags=["a"], topics=["b"])
    clock.advance(hours=1)
    edited = await memory.edit(kept.id, "  A   new   summary ")
    assert edited.summary == "A new summary" and edited.updated_at == clock.now
    assert (await memory.retag(kept.id, ["X", "x", "y"])).tags == ("x", "y")
    stored = store.get_memory(kept.id)
    assert stored is not None and stored.summary == "A new summary" and stored.tags == ("x", "y")
    with pytest.raises(ValueError):
        await memory.edit(kept.id, "   ")
    await memory.delete(kept.id)
    assert store.get_memory(kept.id) is None
    with pytest.raises(StoreError, match="no memory"):
        await memory.delete(kept.id)
    with pytest.raises(StoreError, match="no memory"):
        await memory.edit(kept.id, "gone")
    with pytest.raises(StoreError, match="no session"):
        store.memory_through(12345)

    damaged = add(store, 0.6, T0)
    raw = sqlite3.connect(db_path)
    raw.execute("UPDATE memories SET tags = '{not json' WHERE id = ?", (damaged.id,))
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="damaged"):
        store.list_memories()


async def test_deleting_a_session_keeps_its_memories(store: SqliteChatStore, memory: MemoryService) -> None:
    sid = conversation(store, DECISIONS)
    done = await memory.remember(sid)
    assert done.memory is not None
    store.delete_session(sid)
    (left,) = store.list_memories()
    assert left.id == done.memory.id and left.session_id is None


def wired(
    store: SqliteChatStore, model: OpenAIChatModel | OfflineModel, memory: MemoryService
) -> TurnService:
    turns = TurnService(
        store, model, COUNTER, system_prompt="You are terse.", flush_interval=0.05, memory=memory
    )
    memory.on_change = turns.curations.refresh_memory
    return turns
