"""Opening a long session: its curation is read in the background, the latest messages first, and
a message sent meanwhile goes out at once, planned from what is read so far (the panel says so)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator

import pytest

from engine.chat import HistoryCut
from engine.curation import build as curation_build
from engine.curation import session_curations
from engine.curation.session_curation import SessionCuration
from engine.curation.session_curations import SessionCurations
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, make_sessions, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.held import curation_of

MESSAGES = 1_000
CHUNK = 50


class Held:
    def __init__(self) -> None:
        self.read = threading.Event()
        """A part was read in the background, and waits."""
        self.go = threading.Event()
        """Parts read take their place from now on."""


@pytest.fixture
def held_build(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    """Each part of a session's curation read in the background (after the first chunk, read when
    the session is opened) waits, once read, until the event is set before it takes its place:
    the test decides when the reading is complete, and what changes meanwhile."""
    monkeypatch.setattr(session_curations, "BUILD_CHUNK", CHUNK, raising=False)
    monkeypatch.setattr(curation_build, "BUILD_DELAY", 0.0)
    held_build = Held()
    rebuild = getattr(SessionCurations, "read", None)

    def held(
        self: SessionCurations, session_id: int, cut: HistoryCut | None, *, earlier: bool = True
    ) -> SessionCuration:
        assert rebuild is not None
        read: SessionCuration = rebuild(self, session_id, cut, earlier=earlier)
        if threading.current_thread().name == "curation-build":
            held_build.read.set()
            held_build.go.wait(30)
        return read

    monkeypatch.setattr(SessionCurations, "read", held, raising=False)
    yield held_build
    held_build.go.set()


def sent(server: FakeOpenAIServer, n: int) -> str:
    return json.dumps(server.requests[n]["body"]["messages"])


async def test_enter_right_after_opening_a_long_session_sends_from_what_is_read_then_from_all(
    fake_server: FakeOpenAIServer, held_build: Held
) -> None:
    make_sessions(("Long", [f"turn {n // 2} talks about crane{n}." for n in range(MESSAGES)]))
    fake_server.reply = "Noted."
    app = make_app(base_url=fake_server.base_url, model="gpt-4o-mini")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None, 20)
        screen.composer.insert("what about crane999?")
        pressed = time.perf_counter()
        await pilot.press("enter")
        # Out while the rest of the session is still unread (its reading is held): not waited for.
        await wait_for(pilot, lambda: len(fake_server.requests) == 1 and screen.settled, 20)
        assert fake_server.requests[0]["received_at"] - pressed < 5
        first = sent(fake_server, 0)
        assert "talks about crane999." in first and "talks about crane900." not in first
        assert "talks about crane0." not in first
        said = (
            f"Curating: {CHUNK} of {MESSAGES:,} messages read; "
            f"this request was planned from the latest {CHUNK}."
        )
        assert screen.context is not None and said in screen.context.notes
        assert said in str(screen.query_one("#context-note").render())

        # Once all of it is read, the panel says nothing of it, and the next request is planned
        # from the whole session (it fits the window: sent whole).
        held_build.go.set()
        await wait_for(pilot, lambda: screen.context is not None and screen.context.building is None, 30)
        await wait_for(pilot, lambda: screen.settled)
        assert screen.context is not None
        assert not any("Curating" in note for note in screen.context.notes)
        screen.composer.insert("and crane1?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(fake_server.requests) == 2 and screen.settled, 20)
        second = sent(fake_server, 1)
        assert "turn 0 talks about crane0." in second and "what about crane999?" in second


def read_whole(curations: SessionCurations, session_id: int, held_build: Held) -> SessionCuration:
    """The session's curation once the rest of it, read in the background, has taken its place."""
    held_build.go.set()
    deadline = time.monotonic() + 30
    while curations.building(session_id) is not None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return curation_of(curations, session_id)


def test_a_curation_changed_while_the_rest_is_read_keeps_the_change(held_build: Held) -> None:
    """A message taken and a pin made after the rest was read are in the curation that takes the
    place of the one they were made on."""
    from engine.text.tokens import LazyTokenCounter, load_counter

    session_id = make_sessions(("Long", [f"turn {n // 2} talks about crane{n}." for n in range(150)]))["Long"]
    store = open_store(paths.database_path()).store
    counter = LazyTokenCounter(lambda: load_counter("gpt-4"))
    curations = SessionCurations(store, counter, window=lambda: 100_000, system_prompt="")
    try:
        with curations.held(session_id) as held:
            partial = held.curation
            assert [i.id for i in partial.items] == [m.id for m in store.messages(session_id)][-CHUNK:]
        assert held_build.read.wait(30)  # the rest is read, and held
        with curations.held(session_id) as held:
            pinned = partial.items[0].id
            held.save(partial.pin(pinned))
            message = store.add_message(session_id, "user", "a new question about herons")
            held.take(message)
        whole = read_whole(curations, session_id, held_build)
    finally:
        store.close()
    assert whole is not partial and len(whole.items) == 151 and whole.items[-1].id == message.id
    assert whole.by_id[pinned].pinned


def test_a_standing_instruction_before_the_curated_cut_holds_once_the_session_is_read(
    monkeypatch: pytest.MonkeyPatch, held_build: Held
) -> None:
    """The first part, read to answer at once, has only its own; the whole, read in the background,
    has those said before the cut too."""
    from engine.text.tokens import LazyTokenCounter, load_counter

    monkeypatch.setattr(session_curations, "CURATED_LIMIT", 100)
    said = ["From now on, always answer in French."] + [
        f"turn {n // 2} talks about crane{n}." for n in range(149)
    ]
    session_id = make_sessions(("Long", said))["Long"]
    store = open_store(paths.database_path()).store
    counter = LazyTokenCounter(lambda: load_counter("gpt-4"))
    curations = SessionCurations(store, counter, window=lambda: 100_000, system_prompt="")
    try:
        with curations.held(session_id) as held:
            assert not held.curation.state.standing.entries()
        whole = read_whole(curations, session_id, held_build)
    finally:
        store.close()
    assert said[0] not in [i.text for i in whole.items]
    assert [s.text for s in whole.state.standing.entries() if s.current] == [said[0]]


async def test_the_story_tells_the_messages_before_the_curated_cut_once_the_session_is_read(
    monkeypatch: pytest.MonkeyPatch, held_build: Held
) -> None:
    """The whole, read in the background, tells the latest messages before the cut (up to the
    story's limit) in its story, in order and each once: not one the user took out, a pinned one
    once, one pinned before the story's limit not at all."""
    from engine.curation import stored
    from engine.curation.context_service import ContextService
    from engine.text.tokens import LazyTokenCounter, load_counter

    said = [f"turn {n // 2} talks about crane{n}." for n in range(150)]
    session_id = make_sessions(("Long", said))["Long"]
    store = open_store(paths.database_path()).store
    ids = [m.id for m in store.messages(session_id)]
    counter = LazyTokenCounter(lambda: load_counter("gpt-4"))
    try:
        # While the session was curated whole, the user took one message out and pinned another.
        whole_now = SessionCurations(store, counter, window=lambda: 100_000, system_prompt="")
        whole_now.incremental = False
        context = ContextService(whole_now)
        await context.forget(session_id, ids[30])
        await context.pin(session_id, ids[40])
        await context.pin(session_id, ids[5])  # older than the story tells
        monkeypatch.setattr(session_curations, "CURATED_LIMIT", 100)
        monkeypatch.setattr(stored, "STORY_LIMIT", 130)
        curations = SessionCurations(store, counter, window=lambda: 100_000, system_prompt="")
        with curations.held(session_id) as held:
            first = held.curation.state.story.item_ids()
        assert first == [ids[5], ids[40], *ids[-CHUNK:]]  # the first part: its own
        whole = read_whole(curations, session_id, held_build)
    finally:
        store.close()
    told = whole.state.story.item_ids()
    assert [i.id for i in whole.items] == [ids[5], ids[40], *ids[-100:]]
    assert told == [i for i in ids[20:] if i != ids[30]]  # the latest 130 in order, but the one taken out
    assert ids[30] not in whole.state.told_earlier and ids[40] in whole.state.told_earlier
    assert whole.state.told_earlier.told == 29  # of the 30 before the cut, one was taken out


def test_a_session_grown_past_twice_the_curated_limit_in_use_is_read_again_from_its_latest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Used in one sitting, a session does not keep every message curated: past twice the limit its
    latest are read again in the background, and what was said meanwhile is kept."""
    from engine.text.tokens import LazyTokenCounter, load_counter

    monkeypatch.setattr(session_curations, "CURATED_LIMIT", 30)
    monkeypatch.setattr(curation_build, "BUILD_DELAY", 0.0)
    session_id = make_sessions(("Long", [f"turn {n // 2} talks about crane{n}." for n in range(20)]))["Long"]
    store = open_store(paths.database_path()).store
    counter = LazyTokenCounter(lambda: load_counter("gpt-4"))
    curations = SessionCurations(store, counter, window=lambda: 100_000, system_prompt="")
    try:
        assert len(curation_of(curations, session_id).items) == 20
        for n in range(20, 61):  # 61 messages: one past twice the limit
            message = store.add_message(session_id, ("user", "assistant")[n % 2], f"crane{n} again.")
            curations.take(session_id, message)
        deadline = time.monotonic() + 30
        while (curation := curation_of(curations, session_id)).cut is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        message = store.add_message(session_id, "user", "and one more about herons")
        curations.take(session_id, message)
        ids = [m.id for m in store.messages(session_id)]
        curation = curation_of(curations, session_id)
    finally:
        store.close()
    assert [i.id for i in curation.items] == ids[-31:]  # the latest 30 read again, and the new one
    assert curation.state.told_earlier.told == 31  # the rest told in the story


def test_a_story_told_partly_from_the_store_is_split_into_the_topics_of_the_session_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The messages before the cut weigh the curated ones' words as one index of all would: the
    segments (and so the lines a model wrote for them) are the same however much is curated."""
    from engine.text.tokens import LazyTokenCounter, load_counter

    # Topics that share words, some common and some rare: how rare a word is decides the splits.
    rng = random.Random(0)
    shared = [f"w{chr(97 + n % 26)}{chr(97 + n // 26)}ord" for n in range(60)]
    said = []
    for n in range(160):
        topic = shared[(n // 4) * 4 % 40 : (n // 4) * 4 % 40 + 12]
        said.append(" ".join(rng.choices(topic, weights=range(12, 0, -1), k=9)) + ".")
    session_id = make_sessions(("Topics", said))["Topics"]
    store = open_store(paths.database_path()).store
    counter = LazyTokenCounter(lambda: load_counter("gpt-4"))

    def segments() -> list[list[int]]:
        curations = SessionCurations(store, counter, window=lambda: 100_000, system_prompt="")
        curations.incremental = False
        story = curation_of(curations, session_id).state.story
        return [[f.item_id for f in segment.fragments] for segment in story.segments]

    try:
        whole = segments()
        monkeypatch.setattr(session_curations, "CURATED_LIMIT", 60)
        cut = segments()
    finally:
        store.close()
    assert len(whole) > 8 and cut == whole
