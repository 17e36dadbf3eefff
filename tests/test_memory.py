"""Cross-session memory (issue 6): graduated expiry on an injected clock, start-up expiry, the choice
of memories for a prompt, the offline assessment, the memory section in a new session's request,
the store's memory methods and the config."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.chat import build_services
from engine.chat import MessageStatus, PromptMessage
from engine.curator import SessionCuration
from engine.errors import StoreError
from engine.memory import (
    MEMORY_HEADER,
    PROMPT_MEMORIES,
    AssessedBy,
    Assessment,
    Memory,
    expiry_for,
    memory_budget,
    memory_section,
    select_for_prompt,
)
from engine.memory_assessment import OfflineAssessor, assess_offline
from engine.memory_service import ASSESSED_CHARS, UNASSESSED_PAGE, MemoryService
from engine.tokens import LazyTokenCounter, load_counter
from engine.turn import TurnService
from providers.offline import OfflineModel
from providers.openai_chat import OpenAIChatModel
from sessions import paths
from sessions.config import load_config
from sessions.store import SqliteChatStore, open_store
from tests.apphelpers import write_config
from tests.fake_openai import FakeOpenAIServer

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

DECISIONS = [
    PromptMessage("user", "Let's use PostgreSQL 16 for the billing service; I prefer asyncpg over psycopg."),
    PromptMessage("assistant", "Agreed: billing runs on PostgreSQL 16 with asyncpg, max_connections = 20."),
    PromptMessage("user", "We decided the API lives in billing/api.py and ships on 3 May 2025."),
    PromptMessage("assistant", "Noted: billing/api.py, release on 3 May 2025."),
]
CHIT_CHAT = [
    PromptMessage("user", "hi there"),
    PromptMessage("assistant", "Hello! How are you?"),
    PromptMessage("user", "ok thanks"),
    PromptMessage("assistant", "Sure."),
    PromptMessage("user", "bye"),
]


class Clock:
    """An injected clock that tests move by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteChatStore]:
    opened = open_store(tmp_path / "heedful.db")
    yield opened.store
    opened.store.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory(store: SqliteChatStore, clock: Clock) -> MemoryService:
    return MemoryService(store, OfflineAssessor(), COUNTER, clock=clock)


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


def memory_at(
    importance: float, created: datetime, *, pinned: bool = False, id_: int = 1, **kw: object
) -> Memory:
    fields: dict[str, object] = {
        "id": id_,
        "session_id": None,
        "summary": f"summary {id_}",
        "importance": importance,
        "tags": (),
        "topics": (),
        "reasoning": "",
        "pinned": pinned,
        "created_at": created,
        "updated_at": created,
        "expires_at": expiry_for(importance, created),
    }
    fields.update(kw)
    return Memory(**fields)  # type: ignore[arg-type]


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


# --- choosing memories for a prompt ---------------------------------------------------------------


def test_only_important_or_pinned_unexpired_memories_are_eligible() -> None:
    now = T0 + timedelta(days=10)
    memories = [
        memory_at(0.9, T0, id_=1),  # permanent: in
        memory_at(0.69, T0 + timedelta(days=9), id_=2),  # below 0.7: out, however recent
        memory_at(0.1, T0, id_=3, pinned=True),  # pinned: in, and never expired
        memory_at(0.9, T0, id_=4, expires_at=now),  # expired at now (edited by hand): out
    ]
    chosen = select_for_prompt(memories, now, 10_000, COUNTER)
    assert [m.id for m in chosen] == [1, 3]


def test_the_five_most_recent_are_chosen_pinned_first_and_shown_oldest_first() -> None:
    memories = [memory_at(0.8, T0 + timedelta(days=i), id_=i) for i in range(1, 9)]
    memories.append(memory_at(0.2, T0, id_=99, pinned=True))
    chosen = select_for_prompt(memories, T0 + timedelta(days=30), 10_000, COUNTER)
    assert len(chosen) == PROMPT_MEMORIES
    # The pinned one, then the four newest; in the section they read oldest first.
    assert [m.id for m in chosen] == [99, 5, 6, 7, 8]


def test_the_section_fits_its_budget_and_skips_what_does_not_fit() -> None:
    long = memory_at(0.9, T0 + timedelta(days=2), id_=1, summary="word " * 200)
    short = memory_at(0.9, T0 + timedelta(days=1), id_=2, summary="Uses PostgreSQL 16.")
    budget = 60
    chosen = select_for_prompt([long, short], T0 + timedelta(days=3), budget, COUNTER)
    assert [m.id for m in chosen] == [2]
    section = memory_section(chosen)
    assert section.startswith(MEMORY_HEADER)
    assert "Uses PostgreSQL 16." in section
    assert COUNTER.count(section) + 4 <= budget  # + the message's overhead
    assert select_for_prompt([long, short], T0, 5, COUNTER) == []
    assert memory_section([]) == ""


# --- the offline assessment -----------------------------------------------------------------------


def test_the_offline_assessment_is_deterministic_and_rates_decisions_above_chit_chat() -> None:
    decided = assess_offline(DECISIONS)
    assert decided == assess_offline(list(DECISIONS))  # same input, same assessment
    chatted = assess_offline(CHIT_CHAT)
    assert decided.importance >= 0.7 > 0.3 > chatted.importance
    assert "PostgreSQL 16" in decided.summary
    assert "billing/api.py" in decided.tags
    assert "billing" in decided.topics
    assert len(decided.tags) <= 10 and len(decided.topics) <= 5
    assert "decision" in decided.reasoning
    assert chatted.summary.startswith("Small talk")


def test_facts_and_preferences_raise_importance_over_plain_context() -> None:
    context = [PromptMessage("user", "Can you explain how the scheduler picks the next job in this code?")]
    preference = [PromptMessage("user", "I prefer short answers with code first, always.")]
    assert assess_offline(preference).importance > assess_offline(context).importance


def test_assessments_are_clamped_into_range() -> None:
    clamped = Assessment.clamped(
        importance=4.2,
        summary="  a   summary \n",
        tags=[f"Tag{i}" for i in range(20)] + ["tag1"],
        topics=[f"topic {i}" for i in range(9)],
        reasoning=None,
    )
    assert clamped.importance == 1.0
    assert clamped.summary == "a summary"
    assert clamped.tags == tuple(f"tag{i}" for i in range(10))
    assert len(clamped.topics) == 5
    assert Assessment.clamped(importance=-3, summary="x").importance == 0.0
    for bad in ("high", None, True, float("nan")):
        with pytest.raises(ValueError):
            Assessment.clamped(importance=bad, summary="x")
    with pytest.raises(ValueError):
        Assessment.clamped(importance=0.5, summary="  ")


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


async def test_a_reply_still_streaming_is_left_for_the_next_assessment(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    sid = conversation(store, DECISIONS[:1])
    streaming = store.add_message(sid, "assistant", "half a rep", status=MessageStatus.STREAMING)
    done = await memory.remember(sid)
    assert done.messages == 1
    assert store.memory_through(sid) < streaming.id


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
    store: SqliteChatStore, memory: MemoryService, clock: Clock, tmp_path: Path
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
    raw = sqlite3.connect(tmp_path / "heedful.db")
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


# --- the memory section in the prompt -------------------------------------------------------------


@pytest.fixture
async def remote(fake_server: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    model = OpenAIChatModel(
        model="fake-model", base_url=fake_server.base_url, api_key="k", context_window=8192
    )
    yield model
    await model.aclose()


def wired(
    store: SqliteChatStore, model: OpenAIChatModel | OfflineModel, memory: MemoryService
) -> TurnService:
    turns = TurnService(
        store, model, COUNTER, system_prompt="You are terse.", flush_interval=0.05, memory=memory
    )
    memory.on_change = turns.curations.refresh_memory
    return turns


async def test_a_new_session_sends_the_memories_an_earlier_session_left(
    store: SqliteChatStore, memory: MemoryService, fake_server: FakeOpenAIServer, remote: OpenAIChatModel
) -> None:
    turns = wired(store, remote, memory)
    first = None
    for text in ("Let's use PostgreSQL 16 for billing; I prefer asyncpg.", "We decided: billing/api.py."):
        async for event in turns.send(first, text):
            session = getattr(event, "session", None)
            if session is not None:
                first = session.id
    assert first is not None
    sent = fake_server.requests[-1]["body"]["messages"]
    assert not any(MEMORY_HEADER in m["content"] for m in sent)  # no memories yet

    remembered = await memory.remember(first)
    assert remembered.memory is not None and remembered.memory.importance >= 0.7

    async for _ in turns.send(None, "What database did we pick?"):
        pass
    sent = fake_server.requests[-1]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "You are terse."}
    assert sent[1]["role"] == "system"
    assert sent[1]["content"].startswith(MEMORY_HEADER)
    assert remembered.memory.summary in sent[1]["content"]
    budget = memory_budget(int(8192 * 0.7))
    assert COUNTER.count(sent[1]["content"]) + 4 <= budget

    # The earlier session does not get its own memory back: its log already holds it.
    async for _ in turns.send(first, "And the driver?"):
        pass
    sent = fake_server.requests[-1]["body"]["messages"]
    assert not any(MEMORY_HEADER in m["content"] for m in sent)


async def test_the_section_shows_in_the_preview_and_follows_edits_and_deletes(
    store: SqliteChatStore, memory: MemoryService
) -> None:
    turns = wired(store, OfflineModel(COUNTER, word_delay=0), memory)
    kept = add(store, 0.9, T0, summary="The user's name is Ada.")
    without = TurnService(store, OfflineModel(COUNTER), COUNTER, system_prompt="You are terse.")
    # Before the first message: the empty view counts the section a new session would carry.
    assert (await turns.preview(None)).tokens > (await without.preview(None)).tokens

    async for _ in turns.send(None, "hello"):
        pass
    session = store.latest_session()
    assert session is not None
    view = await turns.preview(session.id)
    (section,) = [m for m in view.messages if m.form == "memory"]
    assert "Ada" in section.content and section.role == "system"

    await memory.edit(kept.id, "The user's name is Grace.")
    view = await turns.preview(session.id)
    (section,) = [m for m in view.messages if m.form == "memory"]
    assert "Grace" in section.content and "Ada" not in section.content

    await memory.delete(kept.id)
    view = await turns.preview(session.id)
    assert [m for m in view.messages if m.form == "memory"] == []


def test_a_memory_section_that_does_not_fit_is_left_out_with_a_note() -> None:
    curation = SessionCuration(window=300, counter=COUNTER)
    curation.set_memory(MEMORY_HEADER + "\n- " + "remembered " * 400)
    new = curation.add_message(1, "user", "hello", COUNTER.count("hello"))
    result = curation.plan(new)
    assert all(m.form != "memory" for m in result.messages)
    assert result.tokens <= result.budget_tokens
    assert any("memory section" in note for note in result.notes)

    curation.set_memory(MEMORY_HEADER + "\n- 2025-03-01: short.")
    result = curation.plan(new)
    assert [m.form for m in result.messages] == ["memory", "verbatim"]


# --- config and wiring ----------------------------------------------------------------------------


def test_memory_settings_default_and_can_be_set(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "none.toml")
    assert loaded.config.memory.enabled is True
    assert loaded.config.memory.inactivity_minutes == 30
    path = tmp_path / "c.toml"
    path.write_text("[memory]\nenabled = false\ninactivity_minutes = 5\ninactivty = 1\n")
    loaded = load_config(path)
    assert loaded.config.memory.enabled is False
    assert loaded.config.memory.inactivity_minutes == 5
    assert loaded.problems == [
        f"{path}: unknown key 'inactivty' in [memory] — ignored (did you mean 'inactivity_minutes'?)."
    ]
    path.write_text("[memory]\ninactivity_minutes = 0\n")
    assert any("memory.inactivity_minutes" in p for p in load_config(path).problems)


def test_heedful_wires_memory_from_the_config() -> None:
    write_config("[memory]\nenabled = false\ninactivity_minutes = 5\n")
    services, _ = build_services(env={})
    try:
        assert services.memory.enabled is False
        assert services.memory.inactivity_seconds == 300
        assert services.turns.curations.memory is services.memory
        assert isinstance(services.memory.assessor, OfflineAssessor)
    finally:
        services.store.close()
