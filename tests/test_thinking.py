"""A reasoning model's thinking, told apart from its answer, whole or as it streams."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.chat import MessageStatus, StoredMessage
from engine.text.thinking import ThinkingSplitter, sent_text, split_thinking
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.held import curation_of

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))

FRAGMENTS = ["<think>", "</think>", "<th", "ink>", "</th", "<", ">", "/", " ", "\n", "Maya", "pool.py", "é"]


def test_a_reply_that_opens_with_a_think_block_is_thinking_then_answer() -> None:
    reply = "\n<think>\nThe user wants the pool size.\n</think>\n\nSet `max_connections = 20`."
    assert split_thinking(reply) == ("The user wants the pool size.", "Set `max_connections = 20`.")
    assert sent_text("assistant", reply) == "Set `max_connections = 20`."


def test_a_block_not_closed_is_all_thinking_and_a_later_one_is_answer() -> None:
    assert split_thinking("<think>still weighing it") == ("still weighing it", "")
    later = "Answer first. <think>not a block</think> here"
    assert split_thinking(later) == ("", later)


def test_the_users_words_are_sent_as_they_are_even_when_they_open_with_think() -> None:
    words = "<think>my own notes</think> please read them"
    assert sent_text("user", words) == words


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14), st.lists(st.integers(0, 60), max_size=8))
def test_streamed_in_any_pieces_the_parts_are_those_of_the_whole(
    fragments: list[str], cuts: list[int]
) -> None:
    text = "".join(fragments)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    splitter = ThinkingSplitter()
    thinking, answer = "", ""
    for start, end in itertools.pairwise(bounds):
        more_thinking, more_answer = splitter.feed(text[start:end])
        thinking, answer = thinking + more_thinking, answer + more_answer
    more_thinking, more_answer = splitter.finish()
    thinking, answer = thinking + more_thinking, answer + more_answer
    assert (thinking.strip(), answer) == split_thinking(text)


def test_a_splitter_given_the_text_so_far_goes_on_from_there() -> None:
    """A reply continued after a cut starts from what is stored."""
    splitter = ThinkingSplitter("<think>halfway thr")
    assert splitter.thinking
    assert splitter.feed("ough</think> the answer") == ("ough", "the answer")
    assert not splitter.thinking


# --- a reasoning model in a conversation ---------------------------------------------------------

THOUGHT = "The user asks about Lisbon. Maybe ConnectionRefusedError in src/db/pool.py matters."
ANSWER = "Set max_connections = 20 in postgresql.conf."


@pytest.fixture
async def turns(store: SqliteChatStore, fake_server: FakeOpenAIServer) -> AsyncIterator[TurnService]:
    model = OpenAIChatModel(
        model="fake-model", base_url=fake_server.base_url, api_key="k", context_window=8192
    )
    yield TurnService(store, model, COUNTER, system_prompt="You are terse.", flush_interval=0.05)
    await model.aclose()


async def _two_turns(
    turns: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> StoredMessage:
    """Ask, get the reasoning model's reply, ask again; the first reply as stored."""
    async for _ in turns.send(None, "How big should the pool be?"):
        pass
    session = store.latest_session()
    assert session is not None
    fake_server.reasoning, fake_server.reply = None, "Anything else?"
    async for _ in turns.send(session.id, "And the timeout?"):
        pass
    return store.messages(session.id)[1]


def _sent_replies(fake_server: FakeOpenAIServer) -> list[str]:
    return [m["content"] for m in fake_server.requests[-1]["body"]["messages"] if m["role"] == "assistant"]


async def test_a_reply_that_thinks_inline_is_stored_whole_and_sent_back_without_its_thinking(
    turns: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"
    reply = await _two_turns(turns, store, fake_server)
    assert reply.content == f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"  # stored as the model wrote it
    assert _sent_replies(fake_server) == [ANSWER]
    assert reply.tokens == COUNTER.count(ANSWER)  # what it costs in a request
    entities = curation_of(turns.curations, reply.session_id).registry.records
    assert "path:src/db/pool.py" not in entities and "error:connectionrefusederror" not in entities


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_thinking_streamed_apart_is_stored_as_the_replys_think_block(
    turns: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer, field: str
) -> None:
    fake_server.reasoning, fake_server.reasoning_field, fake_server.reply = THOUGHT, field, ANSWER
    reply = await _two_turns(turns, store, fake_server)
    assert split_thinking(reply.content) == (THOUGHT, ANSWER)
    assert _sent_replies(fake_server) == [ANSWER]


async def test_a_reply_cut_off_while_thinking_has_nothing_to_send_back(
    turns: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    fake_server.reply = f"<think>\n{THOUGHT} " + "and more thinking " * 20
    fake_server.faults.append("cutoff")
    reply = await _two_turns(turns, store, fake_server)
    assert reply.status is MessageStatus.INTERRUPTED and reply.content.startswith("<think>")
    assert _sent_replies(fake_server) == []


async def test_a_reply_cut_off_is_continued_without_its_thinking_sent_back(
    turns: TurnService, store: SqliteChatStore, fake_server: FakeOpenAIServer
) -> None:
    answer = "Set max_connections to twenty, then restart the database and watch the pool for a day. " * 2
    fake_server.reply = f"<think>\n{THOUGHT}\n</think>\n\n{answer}"
    fake_server.faults.append("cutoff")  # half way: in the answer
    async for _ in turns.send(None, "How big should the pool be?"):
        pass
    cut = store.messages(store.latest_session().id)[1]  # type: ignore[union-attr]
    assert cut.status is MessageStatus.INTERRUPTED
    answer_so_far = split_thinking(cut.content)[1]
    assert answer_so_far  # cut off in the answer

    # It thinks again before it goes on (apart, this time): only the rest joins the answer.
    fake_server.reasoning, fake_server.reply = "Where was I? The restart.", " the server."
    async for _ in turns.resume(cut.session_id):
        pass
    sent = fake_server.requests[-1]["body"]["messages"]
    assert sent[-2] == {"role": "assistant", "content": answer_so_far}
    assert not any("<think>" in m["content"] for m in sent)
    whole = store.messages(cut.session_id)[1]
    assert whole.status is MessageStatus.COMPLETE
    thought, answer = split_thinking(whole.content)
    assert thought == THOUGHT and answer.split() == (answer_so_far + " the server.").split()
