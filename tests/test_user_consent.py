"""Your messages are never left out without your consent, and your choices win over the engine:
the turn and context services the app uses, a real store, the real openai client against the
loopback fake server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine.curation.consent import ConsentChoice
from engine.curation.context_service import ContextService
from engine.curation.context_view import ContextView, Mark
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.turnhelpers import away_from_the_harbour, document, send_text

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
WINDOW = 2000
"""Balanced profile: a 1,400-token budget, and 1,800 tokens the user's kept messages may reach."""


@pytest.fixture
def model(fake_server: FakeOpenAIServer, chat_model: Callable[[int], OpenAIChatModel]) -> OpenAIChatModel:
    fake_server.reply = "Noted."
    return chat_model(WINDOW)


@pytest.fixture
def services(store: SqliteChatStore, model: OpenAIChatModel) -> tuple[TurnService, ContextService]:
    turns = TurnService(store, model, COUNTER, system_prompt="", flush_interval=0.05)
    return turns, ContextService(turns.curations)


def verbatim(view: ContextView) -> set[int]:
    return {s for m in view.messages if m.form == "verbatim" for s in m.sources}


def summarized(view: ContextView) -> set[int]:
    return {s for m in view.messages if m.form == "summary" for s in m.sources}


def left_out_asked(view: ContextView) -> set[int]:
    return {i.item_id for i in view.consent.items if i.left_out} if view.consent else set()


async def big_message_then_more(
    turns: TurnService, fake_server: FakeOpenAIServer
) -> tuple[int, int, ContextView]:
    """A 1,500-token document sent (as "Send anyway" does), then a short unrelated message."""
    session_id, _ = await send_text(turns, None, "Hello there, a quick question first.")
    doc = document("glacier", 150)
    assert 1_400 < COUNTER.count(doc) < 1_800  # over the budget alone, under the window
    session_id, doc_id = await send_text(turns, session_id, doc)
    assert "glacier149" in fake_server.requests[-1]["body"]["messages"][-1]["content"]  # sent whole, once
    await send_text(turns, session_id, "Thanks. What is a good name for a cat?")
    return session_id, doc_id, await turns.preview(session_id)


async def big_message_answered(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer, choice: ConsentChoice
) -> tuple[int, int, ContextView]:
    """:func:`big_message_then_more`, then the user's ``choice`` for the document: the session, the
    document's id, and the view after the answer."""
    turns, context = services
    session_id, doc_id, _ = await big_message_then_more(turns, fake_server)
    return session_id, doc_id, await context.answer_consent(session_id, {doc_id: choice})


# --- item 3: a message that cannot fit is asked about, and the answer is honoured -------------------


async def test_a_message_too_big_for_later_requests_is_asked_about_and_said_not_sent(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer
) -> None:
    turns, _ = services
    _, doc_id, view = await big_message_then_more(turns, fake_server)
    # The request after "send anyway" did not carry it, and the user is asked, not left in the dark.
    assert "glacier149" not in str(fake_server.requests[-1]["body"]["messages"])
    assert view.consent is not None
    (question,) = [i for i in view.consent.items if i.item_id == doc_id]
    assert question.left_out
    assert question.choices == (ConsentChoice.ATTACH, ConsentChoice.SUMMARIZE, ConsentChoice.REMOVE)
    tokens = f"{question.tokens:,}"
    assert view.alerts[0] == (
        f"Your message #{doc_id} ({tokens} tokens) is not being sent: it does not fit. F4 to choose"
    )
    placed = view.item(doc_id)
    assert placed is not None and placed.mark is Mark.LEFT_OUT and "until you choose" in placed.reason


async def test_attach_keeps_it_aside_and_sends_it_whole_when_a_message_refers_to_it(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer
) -> None:
    turns, _ = services
    session_id, doc_id, view = await big_message_answered(services, fake_server, ConsentChoice.ATTACH)
    assert doc_id not in left_out_asked(view) and not view.alerts
    await send_text(turns, session_id, "And a good name for a dog?")
    assert "glacier149" not in str(fake_server.requests[-1]["body"]["messages"])
    await send_text(turns, session_id, "What did the glacier note say about glacier120?")
    sent = [m["content"] for m in fake_server.requests[-1]["body"]["messages"]]
    assert any(m.endswith("glacier149 matters.") and m.startswith("The glacier note 0") for m in sent)
    placed = (await turns.preview(session_id)).item(doc_id)
    assert placed is not None and placed.mark is Mark.RECALLED
    assert placed.reason == "recalled: your message refers to it (you kept it aside for this)"


async def test_a_message_kept_aside_too_big_for_the_window_is_asked_about_again_when_referred_to(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer
) -> None:
    turns, context = services
    session_id, _ = await send_text(turns, None, "Hello there, a quick question first.")
    too_big = document("glacier", 190)  # over the window's 1,800
    session_id, doc_id = await send_text(turns, session_id, too_big)
    await context.answer_consent(session_id, {doc_id: ConsentChoice.ATTACH})
    await send_text(turns, session_id, "And a good name for a dog?")
    assert not left_out_asked(await turns.preview(session_id))
    await send_text(turns, session_id, "What did the glacier note say about glacier120?")
    assert "glacier149" not in str(fake_server.requests[-1]["body"]["messages"])
    view = await turns.preview(session_id)
    assert doc_id in left_out_asked(view)
    assert any(a.startswith(f"Your message #{doc_id} (") and "is not being sent" in a for a in view.alerts)


async def test_summarize_sends_a_summary_and_remove_leaves_it_out_until_restored(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer
) -> None:
    turns, context = services
    session_id, doc_id, view = await big_message_answered(services, fake_server, ConsentChoice.SUMMARIZE)
    assert doc_id in summarized(view) and not view.alerts
    view = await context.answer_consent(session_id, {doc_id: ConsentChoice.REMOVE})
    await send_text(turns, session_id, "What did the glacier note say about glacier120?")
    assert "glacier" not in str(fake_server.requests[-1]["body"]["messages"][:-1])
    view = await turns.preview(session_id)
    assert view.item(doc_id).state is ItemState.PRUNED  # type: ignore[union-attr]
    assert f"#{doc_id} looks relevant again · Alt+R restores it" in view.alerts


async def test_a_message_you_kept_is_sent_past_the_budget_and_asked_about_only_past_the_window(
    services: tuple[TurnService, ContextService], store: SqliteChatStore
) -> None:
    turns, context = services
    session_id, kept_id = await send_text(turns, None, document("orchard", 95))  # ~1,000 tokens
    session_id, big_id = await send_text(turns, session_id, document("lantern", 120))  # ~1,250 tokens
    await context.answer_consent(session_id, {kept_id: ConsentChoice.KEEP, big_id: ConsentChoice.KEEP})
    await send_text(turns, session_id, "Short one.")
    await send_text(turns, session_id, "Another short one.")
    session_id, _ = await send_text(turns, session_id, document("compass", 45))  # ~500 tokens
    view = await turns.preview(session_id)
    # The latest kept message goes past the budget (within the window); the older one cannot fit
    # even the window beside it, and is asked about rather than dropped quietly.
    assert big_id in verbatim(view) and view.tokens > view.budget
    assert view.tokens <= WINDOW * 0.9
    assert any("which you chose to keep whole, is sent past the budget" in n for n in view.notes)
    assert kept_id not in verbatim(view) and kept_id in left_out_asked(view)
    entries = [e for e in store.ledger(session_id, target=str(kept_id)) if e.kind is EntryKind.OVERFLOW]
    assert entries and "not sent until you choose" in entries[-1].reason


async def test_the_over_budget_note_names_what_really_takes_the_room(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer
) -> None:
    turns, _ = services
    session_id, doc_id, _ = await big_message_then_more(turns, fake_server)
    view = await turns.preview(session_id)
    await send_text(turns, session_id, document("glacier", 150).replace("glacier", "quarry"))
    view = await turns.preview(session_id)
    (note,) = [n for n in view.notes if "over the budget" in n]
    assert note.startswith(f"The new message #{doc_id + 4} (")
    assert "Pinned" not in note and "Unpin" not in note


# --- item 4: the user's choices win over recall; every reason is the true one ------------------------


async def test_a_message_you_summarized_stays_summarized_when_it_looks_relevant_again(
    services: tuple[TurnService, ContextService], fake_server: FakeOpenAIServer
) -> None:
    turns, context = services
    session_id, harbour = await send_text(turns, None, "Tell me about the harbour and its lighthouse.")
    await context.answer_consent(session_id, {harbour: ConsentChoice.SUMMARIZE})
    for n in range(3):
        await send_text(turns, session_id, f"Something else entirely, number {n}.")
    await send_text(turns, session_id, "Back to the harbour: what about its lighthouse?")
    sent = fake_server.requests[-1]["body"]["messages"]
    assert not any(m["content"] == "Tell me about the harbour and its lighthouse." for m in sent)
    view = await turns.preview(session_id)
    assert harbour not in verbatim(view)
    assert f"#{harbour} looks relevant again · Alt+R restores it" in view.alerts
    await context.restore(session_id, harbour)  # only the user brings it back
    assert harbour in verbatim(await turns.preview(session_id))


async def test_a_neighbour_recall_names_the_neighbour(
    store: SqliteChatStore, fake_server: FakeOpenAIServer, chat_model: Callable[[int], OpenAIChatModel]
) -> None:
    turns = TurnService(store, chat_model(1200), COUNTER, system_prompt="", flush_interval=0.05)
    session_id, first = await away_from_the_harbour(turns, fake_server)
    await send_text(turns, session_id, "Back to the harbour crane, please.")
    view = await turns.preview(session_id)
    reply = first + 1
    placed = view.item(reply)
    assert placed is not None and placed.mark is Mark.RECALLED
    assert placed.reason == f"recalled: next to #{first}, which your message refers to"
