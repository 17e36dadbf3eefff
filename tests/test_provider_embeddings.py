"""Recall by meaning with the connected provider's ``/v1/embeddings``: the real openai client over
loopback HTTP to the fake server (tests/fake_openai_embeddings.py: a hashed bag of words with a
few synonyms), vectors kept per message in SQLite, and an endpoint that fails leaving words alone
with one notice."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest

from cli.main import main
from engine.curation.consent import ConsentChoice
from engine.curation.context_building import build_view
from engine.curation.dense import DenseIndex
from engine.curation.session_curation import SessionCuration
from engine.text.tokens import LazyTokenCounter, load_counter
from engine.turn.events import ReplyCompleted, TurnEvent, TurnNotice
from engine.turn.service import TurnService
from providers.openai_chat import OpenAIChatModel
from providers.openai_embedder import ProviderEmbedder
from sessions.rows import value
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
EMBEDDING_MODEL = "fake-embedding"
EVIDENCE = "My sister adopted a little kitten from the shelter last spring."
QUESTION = "Which feline did my sibling take in?"
FILLERS = (
    "The deploy script needs a retry around the database migration step.",
    "Schedule the budget review for the finance team on Thursday.",
    "The hiking trail was muddy after the storm, so bring boots.",
    "The laptop battery drains quickly at full screen brightness.",
)


@pytest.fixture
def embedder(fake_server: FakeOpenAIServer) -> Iterator[ProviderEmbedder]:
    made = ProviderEmbedder(model=EMBEDDING_MODEL, base_url=fake_server.base_url, api_key=None)
    yield made
    made.close()


def inputs(server: FakeOpenAIServer) -> list[str]:
    """Every text the server was asked to embed, in order."""
    return [text for body in server.embedding_requests for text in body["input"]]


def test_a_question_recalls_its_evidence_through_the_providers_vectors(
    fake_server: FakeOpenAIServer, embedder: ProviderEmbedder
) -> None:
    counter = load_counter("", model_is_offline=True)
    curation = SessionCuration(window=1000, counter=counter, policy=ConsentChoice.REMOVE)
    curation.state.dense = DenseIndex(embedder)
    texts = [EVIDENCE] + [f"{FILLERS[n % 4]} Note {n}." for n in range(40)]
    for n, text in enumerate(texts):
        user = curation.add_message(2 * n + 1, "user", text, counter.count(text))
        curation.add_message(2 * n + 2, "assistant", f"Understood, noted {n}.", 6)
        curation.apply(curation.plan(user))
    assert curation.by_id[1].state.value == "pruned"
    new = curation.add_message(999, "user", QUESTION, counter.count(QUESTION))
    result = curation.plan(new)
    view = build_view(curation, result, new_id=new.id).item(1)
    assert view is not None and view.reason == "recalled: close in meaning to your message"
    assert {body["model"] for body in fake_server.embedding_requests} == {EMBEDDING_MODEL}
    assert QUESTION in inputs(fake_server)
    # Its words alone do not recall it: the provider's vectors did.
    curation.state.dense = None
    assert 1 not in {s for m in curation.plan(new).messages for s in m.sources}


def a_session(store: SqliteChatStore, messages: int = 30) -> int:
    session = store.create_session("Pets")
    for n in range(messages // 2):
        said = EVIDENCE if n == 0 else f"{FILLERS[n % 4]} Note {n}."
        store.add_message(session.id, "user", said, tokens=COUNTER.count(said))
        store.add_message(session.id, "assistant", f"Understood, noted {n}.", tokens=6)
    return session.id


def service(store: SqliteChatStore, model: OpenAIChatModel, embedder: ProviderEmbedder) -> TurnService:
    """A turn service over ``store`` that recalls by meaning with ``embedder``, its vectors kept
    in ``store``: a new one is what a new run of Heedful starts with."""
    turns = TurnService(store, model, COUNTER, system_prompt="", view_delay=0)
    turns.use_embedder(embedder, cache=store)
    return turns


async def send(turns: TurnService, session_id: int, text: str) -> list[TurnEvent]:
    return [event async for event in turns.send(session_id, text)]


async def test_vectors_are_kept_so_the_next_run_asks_only_for_new_texts(
    fake_server: FakeOpenAIServer,
    store: SqliteChatStore,
    chat_model: Callable[[int], OpenAIChatModel],
    embedder: ProviderEmbedder,
) -> None:
    fake_server.reply = "Noted."
    model = chat_model(8192)
    session_id = a_session(store)
    first = await send(service(store, model, embedder), session_id, QUESTION)
    assert isinstance(first[-1], ReplyCompleted)
    asked_first = inputs(fake_server)
    assert EVIDENCE in asked_first and len(asked_first) >= 20  # the older messages, and the question
    with store._transaction() as conn:
        kept = value(conn, "SELECT count(*) FROM message_vectors WHERE model = ?", (EMBEDDING_MODEL,))
    assert kept == len(asked_first) - 1  # every message's, not the question's (not a candidate yet)

    # A new run: its plan reads the kept vectors and asks only for what it has not seen.
    fake_server.embedding_requests.clear()
    second = await send(service(store, model, embedder), session_id, "And what about the boots?")
    assert isinstance(second[-1], ReplyCompleted)
    asked_second = inputs(fake_server)
    assert not set(asked_second) & set(asked_first[:-1])  # nothing kept is asked for again
    assert "And what about the boots?" in asked_second and len(asked_second) < 8

    # A message whose text changed is embedded again.
    evidence = next(m for m in store.messages(session_id) if m.content == EVIDENCE)
    store.update_message(evidence.id, content="My sister adopted two kittens from the shelter.")
    fake_server.embedding_requests.clear()
    await send(service(store, model, embedder), session_id, "How many did she adopt?")
    assert "My sister adopted two kittens from the shelter." in inputs(fake_server)
    assert "Schedule the budget review for the finance team on Thursday. Note 1." not in inputs(fake_server)


@pytest.mark.parametrize(
    ("fault", "said"), [("503", "The server failed (503"), ("slow_headers:3", "did not answer within 0.5")]
)
async def test_an_endpoint_that_fails_leaves_words_alone_and_says_so_once(
    fake_server: FakeOpenAIServer,
    store: SqliteChatStore,
    chat_model: Callable[[int], OpenAIChatModel],
    fault: str,
    said: str,
) -> None:
    fake_server.reply = "Noted."
    fake_server.embedding_faults.extend([fault] * 20)
    session_id = a_session(store)
    embedder = ProviderEmbedder(
        model=EMBEDDING_MODEL, base_url=fake_server.base_url, api_key=None, read_timeout=0.5
    )
    turns = service(store, chat_model(8192), embedder)
    try:
        events = await send(turns, session_id, QUESTION)
        events += await send(turns, session_id, "And the boots?")
    finally:
        embedder.close()
    assert [type(e) for e in events].count(ReplyCompleted) == 2  # both replies, words alone
    notices = [e.text for e in events if isinstance(e, TurnNotice)]
    assert len(notices) == 1
    assert notices[0].startswith("Recall by meaning is paused: the embeddings endpoint failed")
    assert said in notices[0] and "Traceback" not in notices[0]
    assert len(fake_server.embedding_requests) == 1  # asked once, and not again at once


async def test_the_endpoints_error_text_passes_the_redaction_gate(
    fake_server: FakeOpenAIServer, store: SqliteChatStore, chat_model: Callable[[int], OpenAIChatModel]
) -> None:
    key = "sk-proj-embedTESTkey0123456789abcdefABCDEF"
    fake_server.reply = "Noted."
    fake_server.embedding_faults.append(f"quote:the key {key} may not use this model")
    embedder = ProviderEmbedder(model=EMBEDDING_MODEL, base_url=fake_server.base_url, api_key=key)
    try:
        events = await send(service(store, chat_model(8192), embedder), a_session(store), QUESTION)
    finally:
        embedder.close()
    notices = [e.text for e in events if isinstance(e, TurnNotice)]
    assert len(notices) == 1 and "may not use this model" in notices[0]
    assert key not in notices[0] and key[8:24] not in notices[0]


def test_embeddings_provider_in_the_config_asks_the_connected_server(
    fake_server: FakeOpenAIServer,
) -> None:
    from tests.apphelpers import loaded_engine

    config = 'embeddings = "provider"\nembedding_model = "nomic-embed-text"\n'
    with loaded_engine(config, base_url=fake_server.base_url, model="fake-model") as (services, engine):
        curations = engine.turns.curations
        assert curations.meaning is not None
        assert isinstance(curations.meaning.embedder, ProviderEmbedder)
        assert curations.meaning.embedder.name == "nomic-embed-text"
        assert curations.meaning.cache is cast(object, services.store)
        assert not engine.notices


def test_embeddings_provider_with_no_server_leaves_words_alone_and_says_so() -> None:
    from tests.apphelpers import loaded_engine

    with loaded_engine('embeddings = "provider"\n') as (_, engine):
        assert engine.turns.curations.meaning is None
        assert [n.severity for n in engine.notices] == ["warning"]
        assert "needs a connected server" in engine.notices[0].text


def test_a_plan_out_of_time_for_new_vectors_measures_the_rest_next_time() -> None:
    from tests.test_dense import ConceptEmbedder

    counter = load_counter("", model_is_offline=True)
    curation = SessionCuration(window=1000, counter=counter)
    items = [curation.add_message(n, "user", f"message {n} about topic {n % 7}", 6) for n in range(600)]
    ticks = iter(range(0, 1000, 2))  # each look at the clock is two seconds later
    index = DenseIndex(ConceptEmbedder(), budget=1.0, clock=lambda: float(next(ticks)))
    first = index.similarities("topic 3", items)
    assert len(first.ids) == 512  # one batch, then out of time: the others have no say yet
    second = index.similarities("topic 3", items)
    assert len(second.ids) == 600


def replay_with_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: FakeOpenAIServer, *, live: bool = True
) -> tuple[int, str, str]:
    rows = [{"id": "u0", "role": "user", "content": EVIDENCE}]
    rows.append({"id": "a0", "role": "assistant", "content": "A kitten from the shelter, how lovely."})
    for n in range(40):
        rows.append({"id": f"u{n + 1}", "role": "user", "content": f"{FILLERS[n % 4]} Note number {n}."})
        rows.append({"id": f"a{n + 1}", "role": "assistant", "content": f"Understood, noted {n}."})
    transcript, probes = tmp_path / "t.jsonl", tmp_path / "p.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    probes.write_text(json.dumps({"id": "q", "content": QUESTION}) + "\n")
    args = [str(transcript), "--context-window", "1000", "--consent", "remove", "--probes", str(probes)]
    if live:
        args += ["--base-url", server.base_url, "--model", "fake-model"]
    else:  # the embeddings' server alone: summaries and the curator pass stay offline
        args += ["--embeddings-url", server.base_url]
    code = main(["replay", *args, "--embeddings", "provider", "--embedding-model", EMBEDDING_MODEL])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("live", [True, False], ids=["base-url", "embeddings-url"])
def test_replay_with_the_providers_embeddings_recalls_by_their_meaning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_server: FakeOpenAIServer, live: bool
) -> None:
    code, out, _ = replay_with_provider(tmp_path, capsys, fake_server, live=live)
    assert code == 0
    document = json.loads(out)
    assert document["embeddings"] == EMBEDDING_MODEL
    assert ("curation_calls" in document) is live
    if not live:
        assert fake_server.requests == []  # nothing but vectors was asked of the server
    assert EVIDENCE in [m["content"] for m in document["probes"][0]["context"]["messages"]]
    assert {body["model"] for body in fake_server.embedding_requests} == {EMBEDDING_MODEL}

    fake_server.embedding_faults.append("401")  # figures by words alone must not pass for these
    code, out, err = replay_with_provider(tmp_path, capsys, fake_server)
    assert code == 1 and out == ""
    assert err.startswith("heedful replay: The server") and "Traceback" not in err


async def test_recall_by_meaning_follows_the_chat_model_to_its_server(
    fake_server: FakeOpenAIServer,
    store: SqliteChatStore,
    chat_model: Callable[[int], OpenAIChatModel],
    embedder: ProviderEmbedder,
) -> None:
    """``embeddings = "provider"``: a session switched to another server (here offline) sends it no
    text for vectors, and switched back, recall by meaning asks the chat model's server again."""
    from engine.protocols.models import CurationModels
    from providers.offline import OfflineModel

    fake_server.reply = "Noted."
    connected, offline = chat_model(8192), OfflineModel(COUNTER)
    helpers = {id(connected): CurationModels(embedder=embedder)}
    turns = TurnService(
        store,
        connected,
        COUNTER,
        system_prompt="",
        view_delay=0,
        curation_models=lambda model: helpers.get(id(model), CurationModels()),
    )
    turns.use_model_embedder(cache=store)
    session_id = a_session(store)
    assert isinstance((await send(turns, session_id, QUESTION))[-1], ReplyCompleted)
    assert QUESTION in inputs(fake_server)

    turns.model = offline
    fake_server.embedding_requests.clear()
    assert isinstance((await send(turns, session_id, "And the boots?"))[-1], ReplyCompleted)
    assert inputs(fake_server) == []

    turns.model = connected
    assert isinstance((await send(turns, session_id, "Which pet again?"))[-1], ReplyCompleted)
    assert "Which pet again?" in inputs(fake_server)
