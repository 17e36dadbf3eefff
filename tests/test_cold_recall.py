"""Recall across a whole long session: a message from before the curated cut that the new message
refers to is read back from the store (FTS5) and sent, explained in the ledger and the panel.

Real SQLite store, real openai client against the loopback fake server; the curated limit is
made small so that the session is longer than it without writing 10,000 messages.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.chat import MessageStatus, StoredMessage
from engine.curation import session_curations
from engine.curation.cold_recall import QUERY_WORDS, ColdCandidates, cold_items, query_words
from engine.curation.context_service import ContextService
from engine.curation.context_view import Mark
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind
from engine.curation.prompt import REPLY_PRIMING_TOKENS
from engine.curation.result import cost
from engine.curation.session_curation import SessionCuration
from engine.protocols.store import ItemRecord
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.events import ContextCurated, UserMessageSaved
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.held import curation_of

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
LIMIT = 20
"""The curated limit in these tests: the latest 20 messages."""
FACT = "My locker at the Harbourview gym has the code 4417, and the spare key is with Ottoline."
FILLER = [
    "We walked along the river and talked about the weather today.",
    "The soup recipe needs more salt and a little pepper next time.",
    "Tomorrow the train leaves early, so pack the bags tonight.",
    "The garden needs watering twice a week in this heat.",
]


@pytest.fixture
def model(fake_server: FakeOpenAIServer, chat_model: Callable[[int], OpenAIChatModel]) -> OpenAIChatModel:
    fake_server.reply = "Noted."
    return chat_model(4_000)


def long_session(store: SqliteChatStore) -> tuple[int, int]:
    """A session of 60 messages whose second holds :data:`FACT`; the id of that message."""
    session = store.create_session("Long")
    fact_id = 0
    for n in range(30):
        said = FACT if n == 0 else f"{FILLER[n % len(FILLER)]} (day {n})"
        message = store.add_message(session.id, "user", said, tokens=COUNTER.count(said))
        fact_id = fact_id or message.id
        answer = f"Thanks, I will remember that. {FILLER[(n + 1) % len(FILLER)]}"
        store.add_message(session.id, "assistant", answer, tokens=COUNTER.count(answer))
    return session.id, fact_id


def recalling(store: SqliteChatStore, model: OpenAIChatModel) -> TurnService:
    """A turn service that reads back from ``store`` what came before the curated cut."""
    return TurnService(store, model, COUNTER, system_prompt="", view_delay=0, recall=store)


@pytest.fixture
def long(
    monkeypatch: pytest.MonkeyPatch, store: SqliteChatStore, model: OpenAIChatModel
) -> tuple[TurnService, int, int]:
    """:func:`long_session` curated to its latest LIMIT messages: the turn service, the session's
    id and the id of the message holding :data:`FACT`."""
    monkeypatch.setattr(session_curations, "CURATED_LIMIT", LIMIT)
    session_id, fact_id = long_session(store)
    return recalling(store, model), session_id, fact_id


@pytest.fixture
def whole(store: SqliteChatStore, model: OpenAIChatModel) -> tuple[TurnService, int, int]:
    """:func:`long_session` curated whole, as before it grew long: the turn service, the session's
    id and the id of the message holding :data:`FACT`."""
    session_id, fact_id = long_session(store)
    turns = recalling(store, model)
    curation_of(turns.curations, session_id)
    return turns, session_id, fact_id


@pytest.fixture
def cut_later(
    monkeypatch: pytest.MonkeyPatch, store: SqliteChatStore, model: OpenAIChatModel
) -> Callable[[], TurnService]:
    """A turn service made later, once the session is longer than the curated limit (LIMIT)."""

    def made() -> TurnService:
        monkeypatch.setattr(session_curations, "CURATED_LIMIT", LIMIT)
        return recalling(store, model)

    return made


async def ask(turns: TurnService, session_id: int, text: str) -> list[object]:
    events: list[object] = []
    async for event in turns.send(session_id, text):
        events.append(event)
    assert any(isinstance(e, UserMessageSaved) for e in events)
    return events


def sent(fake_server: FakeOpenAIServer) -> list[str]:
    return [m["content"] for m in fake_server.requests[-1]["body"]["messages"]]


def conversation(fake_server: FakeOpenAIServer) -> list[str]:
    """The last request's messages but its system ones (the story so far, standing instructions)."""
    return [m["content"] for m in fake_server.requests[-1]["body"]["messages"] if m["role"] != "system"]


async def test_a_question_about_a_message_before_the_cut_sends_that_message(
    long: tuple[TurnService, int, int], store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    turns, session_id, fact_id = long
    events = await ask(turns, session_id, "What was the code of my Harbourview locker?")

    assert FACT in sent(fake_server)
    # Sent in the conversation's order: before every curated message, the question last.
    assert conversation(fake_server).index(FACT) == 0
    assert sent(fake_server)[-1] == "What was the code of my Harbourview locker?"
    recalls = {e.target: e for e in store.ledger(session_id) if e.action == "recall"}
    assert recalls[str(fact_id)].kind is EntryKind.OPERATION
    assert "about the same thing" in recalls[str(fact_id)].reason
    # The messages beside it come with it, as beside a curated one: the answer after it here.
    beside = [e for target, e in recalls.items() if target != str(fact_id)]
    assert all(0 < int(e.target) - fact_id <= 2 and "sits next to" in e.reason for e in beside)
    assert all("read from the messages before the curated ones" in e.reason for e in recalls.values())
    view = next(e.view for e in events if isinstance(e, ContextCurated))
    shown = [(i.mark, i.reason) for i in view.items if i.id == fact_id]
    assert len(shown) == 1 and shown[0][0] is Mark.RECALLED and "before the curated ones" in shown[0][1]
    assert view.tokens <= view.budget


async def test_a_question_that_matches_nothing_before_the_cut_recalls_nothing(
    long: tuple[TurnService, int, int], store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    turns, session_id, _ = long
    await ask(turns, session_id, "Which telescope should I buy for astronomy?")

    assert FACT not in sent(fake_server)
    assert not [e for e in store.ledger(session_id) if e.action == "recall"]
    # The turn after it, about the fact again, brings it back: nothing was lost by the cut.
    await ask(turns, session_id, "Who has the spare key of my Harbourview locker?")
    assert FACT in sent(fake_server)


async def test_the_preview_of_a_draft_shows_the_earlier_message_it_would_recall(
    long: tuple[TurnService, int, int], store: SqliteChatStore
) -> None:
    turns, session_id, fact_id = long
    view = await ContextService(turns.curations).draft(session_id, "Who has my Harbourview key?")
    assert [i.mark for i in view.items if i.id == fact_id] == [Mark.RECALLED]
    assert any(fact_id in m.sources for m in view.messages)
    assert not [e for e in store.ledger(session_id) if e.action == "recall"]  # a preview changes nothing


async def test_a_message_the_user_took_out_before_the_cut_is_not_recalled(
    whole: tuple[TurnService, int, int], cut_later: Callable[[], TurnService], fake_server: FakeOpenAIServer
) -> None:
    before, session_id, fact_id = whole
    await ContextService(before.curations).forget(session_id, fact_id)
    await ask(cut_later(), session_id, "What was the code of my Harbourview locker?")
    assert FACT not in sent(fake_server)


def _stored(message_id: int, role: str, text: str) -> StoredMessage:
    return StoredMessage(
        id=message_id,
        session_id=1,
        role="user" if role == "user" else "assistant",
        content=text,
        status=MessageStatus.COMPLETE,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        tokens=COUNTER.count(text),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    window=st.integers(min_value=300, max_value=3_000),
    sizes=st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=8),
)
def test_messages_recalled_from_before_the_cut_never_take_a_request_past_its_budget(
    window: int, sizes: list[int]
) -> None:
    curation = SessionCuration(window=window, counter=COUNTER)
    for n in range(12):
        text = f"{FILLER[n % len(FILLER)]} Entry {n}."
        curation.add_message(1_000 + n, "user" if n % 2 == 0 else "assistant", text, COUNTER.count(text))
    new = curation.add_message(2_000, "user", "Where is the Zanzibar ledger?", 8)
    texts = ["The Zanzibar ledger " + "is kept safe " * size for size in sizes]
    cold = cold_items([[_stored(n + 1, "user", text)] for n, text in enumerate(texts)], COUNTER)
    result = curation.plan(new, cold=ColdCandidates(cold))
    recalled = [m for m in result.messages if m.sources and m.sources[0] < 1_000]
    assert len(recalled) == len(result.cold)
    if not result.over_budget:
        assert result.tokens <= result.budget_tokens
    # With room for the whole conversation, the summary reserve and one of them, one is recalled.
    everything = sum(cost(i.tokens) for i in curation.items) + REPLY_PRIMING_TOKENS
    reserve = int(result.budget_tokens * curation.profile.memory_share)
    if result.budget_tokens >= everything + reserve + min(cost(i.tokens) for i in cold):
        assert result.cold, "an earlier message that the question names and that fits is recalled"


async def test_a_question_worded_otherwise_finds_the_message_by_its_words_beginnings(
    long: tuple[TurnService, int, int], fake_server: FakeOpenAIServer
) -> None:
    turns, session_id, _ = long
    await ask(turns, session_id, "What about my lockers and the spares?")  # "locker", "spare" in it
    assert FACT in sent(fake_server)


def test_earlier_messages_are_read_with_the_conversation_on_either_side(store: SqliteChatStore) -> None:
    session = store.create_session("Runs")
    ids = [store.add_message(session.id, "user", f"Message {n}.", tokens=3).id for n in range(8)]
    other = store.create_session("Between")
    store.add_message(other.id, "user", "Another session's message.", tokens=4)
    later = store.add_message(session.id, "user", "After the other session's.", tokens=4).id

    runs = store.earlier_around(session.id, [ids[4], ids[7]], upto=later, reach=2)
    assert [[m.id for m in run] for run in runs] == [ids[2:7], [*ids[5:8], later]]
    # Nothing past the cut; at the session's start, what there is.
    runs = store.earlier_around(session.id, [ids[0], ids[7]], upto=ids[7], reach=2)
    assert [[m.id for m in run] for run in runs] == [ids[0:3], ids[5:8]]


def test_only_messages_that_follow_one_another_sit_side_by_side() -> None:
    messages = [_stored(n, "user", f"Entry {n}.") for n in (1, 2, 3, 7, 8)]
    items = cold_items([messages[:3], messages[3:], messages[1:3]], COUNTER)
    positions = [i.position for i in items]
    assert [i.id for i in items] == [1, 2, 3, 7, 8]  # each once, in conversation order
    assert positions[1] - positions[0] == positions[2] - positions[1] == positions[4] - positions[3] == 1
    assert positions[3] - positions[2] > 2  # no neighbour credit across the gap
    assert positions[-1] == -1  # before every curated message


async def test_a_message_pinned_before_the_session_grew_past_the_cut_is_still_sent(
    whole: tuple[TurnService, int, int], cut_later: Callable[[], TurnService], fake_server: FakeOpenAIServer
) -> None:
    before, session_id, fact_id = whole
    await ContextService(before.curations).pin(session_id, fact_id)
    curated_whole = curation_of(before.curations, session_id)
    turns = cut_later()

    await ask(turns, session_id, "Which telescope should I buy for astronomy?")  # nothing to do with it
    assert FACT in sent(fake_server), "a pin holds whatever the message's age"
    cut = curation_of(turns.curations, session_id)
    assert cut.items[0].id == fact_id and cut.items[0].pinned
    # The curated messages keep the turn numbers they had when the session was curated whole.
    latest = [i for i in curated_whole.items if i.id > cut.items[1].id - 1]
    assert [(i.id, i.turn) for i in cut.items[1 : len(latest) + 1]] == [(i.id, i.turn) for i in latest]


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.integers(min_value=1, max_value=60), st.integers(min_value=1, max_value=5)),
        min_size=1,
        max_size=6,
    )
)
def test_messages_read_in_runs_are_placed_once_in_order_side_by_side_only_when_they_follow(
    runs: list[tuple[int, int]],
) -> None:
    """However the runs overlap: each message once, in conversation order, before every curated
    one; two sit side by side exactly when one run has them one after the other."""
    read = [[_stored(first + n, "user", f"Entry {first + n}.") for n in range(size)] for first, size in runs]
    items = cold_items(read, COUNTER)
    ids = [i.id for i in items]
    assert ids == sorted({m.id for run in read for m in run})
    positions = [i.position for i in items]
    assert all(a < b for a, b in pairwise(positions)) and positions[-1] == -1
    follows = {(a.id, b.id) for run in read for a, b in pairwise(run)}
    for (left, right), (p, q) in zip(pairwise(ids), pairwise(positions), strict=True):
        assert (q - p == 1) == ((left, right) in follows)
        assert q - p == 1 or q - p > 2  # apart: no neighbour credit passes


def test_an_earlier_message_that_matches_better_than_any_curated_one_ranks_above_them() -> None:
    curation = SessionCuration(window=4_000, counter=COUNTER)
    vague = "The ledger is somewhere in the office, I think."
    curation.add_message(900, "assistant", vague, COUNTER.count(vague))
    for n in range(12):
        text = f"{FILLER[n % len(FILLER)]} Entry {n}."
        curation.add_message(1_000 + n, "user" if n % 2 == 0 else "assistant", text, COUNTER.count(text))
    new = curation.add_message(2_000, "user", "Where is the Zanzibar shipping ledger kept?", 10)
    exact = "The Zanzibar shipping ledger is kept in the harbour safe."
    cold = cold_items([[_stored(1, "user", exact)]], COUNTER)

    scores = curation.plan(new, cold=ColdCandidates(cold)).scores
    # On one scale: the curated message's relevance is its share of the best match, found earlier.
    assert scores[1].relevance == 1.0
    assert scores[900].relevance < 0.5
    assert scores[1].total > scores[900].total


def written(store: SqliteChatStore, texts: list[str]) -> int:
    """A session of ``texts``, the user's and the assistant's in turn; its id."""
    session = store.create_session("Written")
    for n, text in enumerate(texts):
        store.add_message(session.id, "user" if n % 2 == 0 else "assistant", text, tokens=COUNTER.count(text))
    return session.id


@pytest.fixture
def at_limit(monkeypatch: pytest.MonkeyPatch, store: SqliteChatStore, model: OpenAIChatModel) -> TurnService:
    """A turn service for sessions curated to their latest LIMIT messages."""
    monkeypatch.setattr(session_curations, "CURATED_LIMIT", LIMIT)
    return recalling(store, model)


async def test_a_name_the_earlier_messages_are_full_of_does_not_outweigh_the_question_s_other_words(
    at_limit: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    # The curated part never names Ottoline, so there the name looks rarer than any word; in the
    # whole store, half the messages name her and "painting" only one.
    painted = "We loved painting sunsets by the harbour together lately. " + " ".join(FILLER) * 2
    earlier = [f"Ottoline called again: {FILLER[n % len(FILLER)]} " * 8 for n in range(60)]
    earlier[30] = painted
    session_id = written(store, earlier + [f"{FILLER[n % len(FILLER)]} (day {n})" for n in range(LIMIT)])

    await ask(at_limit, session_id, "What has Ottoline been painting?")
    assert painted in sent(fake_server)


def test_the_store_counts_the_messages_holding_a_word_or_a_word_it_begins(store: SqliteChatStore) -> None:
    first, second = store.create_session("A"), store.create_session("B")
    store.add_message(first.id, "user", "Painting the café.", tokens=4)
    store.add_message(second.id, "user", "She paints; no cafe today.", tokens=6)
    store.add_message(second.id, "user", "Nothing here.", tokens=3)
    # Across sessions, accents aside, as the search index reads words.
    assert store.word_documents(["paint", "café", "zebra"]) == (3, [2, 2, 0])


async def test_a_standing_instruction_given_before_the_cut_is_still_sent(
    at_limit: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    said = ["From now on, always answer in French.", "Please always reply in metric units."]
    texts = [said[n // 20] if n in (0, 20) else f"{FILLER[n % len(FILLER)]} (day {n})" for n in range(40)]
    session_id = written(store, [text for user in texts for text in (user, "Noted.")])
    # The second is pinned: it is read with the curated part, and stated once all the same.
    second = store.messages_after(session_id, 0, limit=100)[40]
    assert second.content == said[1]
    pinned = ItemRecord(second.id, ItemState.ACTIVE, True, False, None, False)
    store.save_curation(session_id, items=[pinned], entities=[], ledger=[])

    await ask(at_limit, session_id, "What should I pack for the train?")
    standing = [m for m in sent(fake_server) if "answer in French" in m]
    assert len(standing) == 1 and standing[0].count("metric units") == 1


def test_a_name_the_conversation_writes_as_a_word_is_asked_for_by_its_rarity_not_first() -> None:
    """Recall asks the store about the new message's entities first; a capitalised word that the
    conversation also writes as a plain word is no entity, and waits its turn among the rare words."""
    curation = SessionCuration(window=8000, counter=COUNTER)
    for n in range(40):
        text = "Try to substitute the flour." if n == 0 else f"Ordinary filler line number {n}."
        curation.add_message(n + 1, "user" if n % 2 == 0 else "assistant", text, COUNTER.count(text))
    rare = "quokka marzipan zeppelin harpsichord tundra origami lantern walnut glacier mosaic violin meteor"
    text = f"Substitute {rare}."
    new = curation.add_message(100, "user", text, COUNTER.count(text))
    (named,) = [m for m in new.mentions if m.label == "Substitute"]

    assert "substitut" in query_words(new, curation.term_index, frozenset())  # a name: asked first
    asked = query_words(new, curation.term_index, {named.ref})  # a word: the rarer ones first
    assert "substitut" not in asked and len(asked) == QUERY_WORDS
