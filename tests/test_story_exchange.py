"""The story lines a model wrote travel with a session: a transcript export carries them (naming
transcript ids), an import stores them under the new messages' ids and the story uses them without
asking the model again; Markdown lists them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.summaries.story_book import SESSION_FIRST_ID, StoredStoryLine
from sessions import exchange, importing
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.test_curation_models import turn
from tests.test_story_model import TOLD, asked_with_a_model, caught_up, is_story, story_sent

pytestmark = pytest.mark.usefixtures("models_closed")


@pytest.fixture
def other(tmp_path: Path) -> Iterator[SqliteChatStore]:
    opened = SqliteChatStore(tmp_path / "b" / "heedful.db")
    yield opened
    opened.close()


def by_position(store: SqliteChatStore, session_id: int) -> list[tuple[object, ...]]:
    """The session's story lines with message ids replaced by their positions."""
    position = {m.id: n for n, m in enumerate(store.messages(session_id))}
    position[SESSION_FIRST_ID] = -1
    return sorted(
        (
            position[line.first_id],
            position[line.last_id],
            tuple(position[s] for s in line.sources),
            line.model,
            line.source_hash,
            line.text,
        )
        for line in store.load_story_lines(session_id)
    )


def test_story_lines_round_trip_through_a_transcript_and_markdown_lists_them(
    store: SqliteChatStore, other: SqliteChatStore, tmp_path: Path
) -> None:
    session = store.create_session("Refunds")
    ids = [
        store.add_message(session.id, "user" if n % 2 == 0 else "assistant", f"message {n}").id
        for n in range(6)
    ]
    store.save_story_line(
        session.id, StoredStoryLine(ids[0], ids[3], "m", (ids[0], ids[1]), "h1", "They chose X.")
    )
    store.save_story_line(
        session.id, StoredStoryLine(SESSION_FIRST_ID, ids[3], "m", (ids[0],), "h2", "All of it.")
    )
    first = tmp_path / "first.jsonl"
    first.write_text(exchange.to_jsonl(store.dump_session(session.id)), encoding="utf-8")

    for target in (other, store):
        imported = target.import_session(importing.open_session_file(first)).session_id
        assert by_position(target, imported) == by_position(store, session.id)
        assert len(target.load_story_lines(imported)) == 2
        again = exchange.to_jsonl(target.dump_session(imported))
        assert again == first.read_text(encoding="utf-8")  # export → import → export: the same file

    text = exchange.to_markdown(store.dump_session(session.id))
    said = text[text.index("The story so far") :]
    assert said.index(f"- [#{ids[0]}] All of it.") < said.index(f"- [#{ids[0]}, #{ids[1]}] They chose X.")


async def test_an_imported_session_s_story_uses_the_model_s_lines_without_asking_again(
    fake_server: FakeOpenAIServer, store: SqliteChatStore, tmp_path: Path
) -> None:
    turns, session_id = await asked_with_a_model(store, fake_server, TOLD)
    await caught_up(turns, session_id)
    path = tmp_path / "export.jsonl"
    path.write_text(exchange.to_jsonl(store.dump_session(session_id)), encoding="utf-8")
    imported = store.import_session(importing.open_session_file(path)).session_id
    assert len(store.load_story_lines(imported)) == len(store.load_story_lines(session_id))

    asked = sum(is_story(r["body"]) for r in fake_server.requests)
    await turn(turns, imported, "What did we settle about the billing refund?")
    assert any(TOLD in line for line in story_sent(fake_server))
    assert sum(is_story(r["body"]) for r in fake_server.requests) == asked  # nothing asked for again
