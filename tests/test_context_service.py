"""The user's own actions on the context, through the service the app uses: real store, real
openai client against the loopback fake server, a small window so that curation has to forget."""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import count
from typing import Any

import pytest

from engine.chat import StoredMessage
from engine.curation.consent import ConsentChoice
from engine.curation.context_service import ContextService
from engine.curation.context_view import ContextView, Mark, Section
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind
from engine.curation.session_curation import CurationRefused
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.events import UserMessageSaved
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
WINDOW = 900
"""Balanced profile: about 630 tokens of budget, so a few long messages push the old ones out."""

TOPICS = ["harbour", "violin", "glacier", "orchard", "lantern", "compass", "meadow", "quarry"]


def long_text(topic: str, n: int) -> str:
    """A ~``n * 8``-token message about ``topic`` that shares no other word with the other topics."""
    return " ".join(f"The {topic} note {i} says {topic}{i} matters." for i in range(n))


@pytest.fixture
async def model(fake_server: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    numbers = count(1)

    def reply(body: dict[str, Any]) -> str:
        # A long answer on the question's topic, so assistant items are worth forgetting.
        topic = next(t for t in TOPICS if t in body["messages"][-1]["content"])
        return f"Answer {next(numbers)}: " + long_text(topic, 14)

    fake_server.reply = reply
    opened = OpenAIChatModel(
        model="fake-model",
        base_url=fake_server.base_url,
        api_key="test-key",
        context_window=WINDOW,
        read_timeout=5.0,
        connect_timeout=2.0,
    )
    yield opened
    await opened.aclose()


@pytest.fixture
def services(store: SqliteChatStore, model: OpenAIChatModel) -> tuple[TurnService, ContextService]:
    turns = TurnService(store, model, COUNTER, system_prompt="", flush_interval=0.05)
    return turns, ContextService(turns.curations)


async def chat(turns: TurnService, session_id: int | None, text: str) -> int:
    async for event in turns.send(session_id, text):
        if isinstance(event, UserMessageSaved):
            session_id = event.session.id
    assert session_id is not None
    return session_id


async def conversation(turns: TurnService, topics: list[str]) -> int:
    session_id: int | None = None
    for topic in topics:
        session_id = await chat(turns, session_id, f"Tell me about the {topic}.")
    assert session_id is not None
    return session_id


async def first_question(
    turns: TurnService, store: SqliteChatStore, topics: int
) -> tuple[int, StoredMessage]:
    """A conversation on the first ``topics`` topics: its session, and the user's first message."""
    session_id = await conversation(turns, TOPICS[:topics])
    return session_id, store.messages(session_id)[0]


def sent_verbatim(view: ContextView) -> set[int]:
    return {source for m in view.messages if m.form == "verbatim" for source in m.sources}


def replies(store: SqliteChatStore, session_id: int) -> list[int]:
    return [m.id for m in store.messages(session_id) if m.role == "assistant"]


async def test_a_pinned_reply_survives_turns_that_prune_its_neighbours(
    store: SqliteChatStore, services: tuple[TurnService, ContextService]
) -> None:
    turns, context = services
    session_id = await conversation(turns, TOPICS[:2])
    first_reply, second_reply = replies(store, session_id)
    view = await context.pin(session_id, first_reply)
    assert view.item(first_reply).mark is Mark.PINNED  # type: ignore[union-attr]
    for topic in TOPICS[2:6]:
        await chat(turns, session_id, f"Tell me about the {topic}.")
    view = await turns.preview(session_id)
    assert first_reply in sent_verbatim(view)
    pinned = view.item(first_reply)
    assert pinned is not None and (pinned.section, pinned.reason) == (Section.RETAINED, "pinned by you")
    # Its unpinned twin, as old and as unrelated, was forgotten by the same turns.
    assert second_reply not in sent_verbatim(view)
    assert view.item(second_reply).state is not ItemState.ACTIVE  # type: ignore[union-attr]


async def test_restore_brings_back_the_exact_original_text(
    store: SqliteChatStore, services: tuple[TurnService, ContextService]
) -> None:
    turns, context = services
    session_id = await conversation(turns, TOPICS[:6])
    original = store.messages(session_id)[1]
    view = await turns.preview(session_id)
    assert view.item(original.id).state is not ItemState.ACTIVE  # type: ignore[union-attr]
    view = await context.restore(session_id, original.id)
    restored = view.item(original.id)
    assert restored is not None and restored.state is ItemState.ACTIVE
    assert (await context.inspect(session_id, original.id)).text == original.content
    entries = [e for e in await context.ledger(session_id) if e.target == str(original.id)]
    assert entries[-1].action == "restore"


async def test_forgetting_your_own_message_is_logged_as_your_choice(
    services: tuple[TurnService, ContextService], store: SqliteChatStore
) -> None:
    turns, context = services
    session_id, question = await first_question(turns, store, 2)
    view = await context.forget(session_id, question.id)
    forgotten = view.item(question.id)
    assert forgotten is not None and forgotten.state is ItemState.PRUNED
    assert question.id not in sent_verbatim(view)
    detail = await context.inspect(session_id, question.id)
    assert [(e.kind, e.action) for e in detail.ledger] == [
        (EntryKind.CONSENT, "remove"),
        (EntryKind.OPERATION, "prune"),
    ]
    assert detail.ledger[-1].reason == "forgotten by you"
    assert store.messages(session_id)[0].content == question.content  # nothing is deleted


async def test_the_why_dialog_ranks_only_what_competes_for_the_room(
    services: tuple[TurnService, ContextService], store: SqliteChatStore
) -> None:
    turns, context = services
    session_id, question = await first_question(turns, store, 3)  # older than the last 2 turns
    before = await context.inspect(session_id, question.id)
    assert before.scores is not None and before.worth is not None
    await context.forget(session_id, question.id)
    after = await context.inspect(session_id, question.id)
    assert after.scores is not None and after.worth is None  # scored, but out by the user's word


async def test_a_pinned_message_cannot_be_forgotten_until_unpinned(
    services: tuple[TurnService, ContextService], store: SqliteChatStore
) -> None:
    turns, context = services
    session_id, question = await first_question(turns, store, 1)
    await context.pin(session_id, question.id)
    with pytest.raises(CurationRefused, match="unpin"):
        await context.forget(session_id, question.id)
    await context.pin(session_id, question.id, pinned=False)
    view = await context.forget(session_id, question.id)
    assert view.item(question.id).state is ItemState.PRUNED  # type: ignore[union-attr]


async def test_consent_answers_change_only_what_the_user_chose_and_are_remembered(
    services: tuple[TurnService, ContextService], store: SqliteChatStore, model: OpenAIChatModel
) -> None:
    turns, context = services
    session_id: int | None = None
    for topic in TOPICS[:6]:  # long questions: the engine must ask before dropping them
        session_id = await chat(turns, session_id, f"About the {topic}: " + long_text(topic, 5))
    assert session_id is not None
    view = await turns.preview(session_id)
    assert view.consent is not None
    asked = [c.item_id for c in view.consent.items]
    for question in view.consent.items:
        placed = view.item(question.item_id)
        # One that cannot fit is left out and asked about as such; one that fits is still sent.
        assert placed is not None and (
            placed.mark is Mark.LEFT_OUT and "not sent until you choose" in placed.reason
            if question.left_out
            else placed.in_prompt
        )
    assert len(asked) >= 2, "two of the user's messages to answer differently"
    summarize, keep = asked[0], asked[-1]
    view = await context.answer_consent(
        session_id, {summarize: ConsentChoice.SUMMARIZE, keep: ConsentChoice.KEEP}
    )
    assert view.item(summarize).state is ItemState.SUMMARIZED  # type: ignore[union-attr]
    assert view.item(keep).state is ItemState.ACTIVE  # type: ignore[union-attr]
    ledger = await context.ledger(session_id)
    consents = [(e.target, e.action) for e in ledger if e.kind is EntryKind.CONSENT]
    assert (str(summarize), "summarize") in consents and (str(keep), "keep") in consents

    await context.answer_consent(session_id, {}, remember=ConsentChoice.REMOVE)
    # A fresh start (another app run) reads the policy back from the store.
    again = TurnService(store, model, COUNTER, system_prompt="")
    view = await again.preview(session_id)
    assert view.consent is None


async def test_a_draft_shows_what_it_would_recall_without_changing_anything(
    services: tuple[TurnService, ContextService], store: SqliteChatStore
) -> None:
    turns, context = services
    session_id = await conversation(turns, TOPICS[:6])
    harbour_reply = replies(store, session_id)[0]
    before = await turns.preview(session_id)
    assert harbour_reply not in sent_verbatim(before)
    ledger_before = await context.ledger(session_id)

    draft = await context.draft(session_id, "What did the harbour3 note say about the harbour?")
    assert harbour_reply in [i.id for i in draft.recalled]
    assert await context.ledger(session_id) == ledger_before
    assert (await turns.preview(session_id)).item(harbour_reply) == before.item(harbour_reply)


async def test_tokens_saved_add_up_over_the_session_and_survive_a_restart(
    services: tuple[TurnService, ContextService], store: SqliteChatStore, model: OpenAIChatModel
) -> None:
    turns, _ = services
    session_id = await conversation(turns, TOPICS[:6])
    before = (await turns.preview(session_id)).session_saved_tokens
    assert before > 0
    await chat(turns, session_id, "Tell me about the meadow.")
    view = await turns.preview(session_id)
    assert view.session_saved_tokens > before
    assert view.upcoming, "a preview is the next request's plan, not counted in the total yet"
    again = await TurnService(store, model, COUNTER, system_prompt="").preview(session_id)
    assert again.session_saved_tokens == view.session_saved_tokens
