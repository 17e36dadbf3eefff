"""Fixtures shared by the whole suite."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.geometry import Size
from textual.screen import Screen

from engine.text.redaction import forget_secrets
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.kept_clients import close_kept
from tests.memory_helpers import COUNTER, Clock

if TYPE_CHECKING:
    from engine.memory.service import MemoryService
    from providers.openai_chat import OpenAIChatModel
    from tests.turnhelpers import Start

# The openai package reads these; a developer's real key or endpoint must never reach a test.
_HIDDEN_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "TMUX")
"""OpenAI settings, and tmux's (run inside tmux, every app would tell about its escape-time)."""


@pytest.fixture(autouse=True)
def hermetic_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the app's config and data at the test's own directory, hide any OpenAI and tmux settings, and
    forget the keys earlier tests had redacted (engine.text.redaction remembers them per process)."""
    forget_secrets()
    monkeypatch.setenv("HEEDFUL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HEEDFUL_CONFIG", str(tmp_path / "config" / "config.toml"))
    for name in _HIDDEN_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times on screen are local; pin the zone so snapshots match everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
async def models_closed() -> AsyncIterator[None]:
    """Closes, after the test and on its own loop, the models and helpers it noted with
    :func:`tests.kept_clients.kept` (left to the garbage collector, their sockets would be closed
    after the loop is gone, or by a later test on its loop)."""
    yield
    await close_kept()


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    """A started loopback fake OpenAI-compatible server; see tests/fake_openai.py."""
    with FakeOpenAIServer() as server:
        yield server
        # An assertion inside on_request runs in the server's thread; surface it here.
        if server.hook_errors:
            raise server.hook_errors[0]


@pytest.fixture
async def chat_model(fake_server: FakeOpenAIServer) -> AsyncIterator[Callable[..., OpenAIChatModel]]:
    """Opens models of the real openai client on ``fake_server``: a context window (8,192 unless
    given) and any other settings to override; each is closed when the test ends."""
    from providers.openai_chat import OpenAIChatModel  # not for every test: openai is slow to import

    opened: list[OpenAIChatModel] = []

    def open_model(window: int = 8192, **overrides: object) -> OpenAIChatModel:
        settings: dict[str, object] = {
            "model": "fake-model",
            "base_url": fake_server.base_url,
            "api_key": "test-key",
            "context_window": window,
            "read_timeout": 5.0,
            "connect_timeout": 2.0,
            **overrides,
        }
        model = OpenAIChatModel(**settings)  # type: ignore[arg-type]
        opened.append(model)
        return model

    yield open_model
    for model in opened:
        await model.aclose()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A database file of the test's own, apart from the one the app opens (under ``data/``)."""
    return tmp_path / "store" / "heedful.db"


@pytest.fixture
def started(db_path: Path, chat_model: Callable[..., OpenAIChatModel]) -> Start:
    """Starts the services the app uses on ``db_path`` with a 4,000-token model, store and all, as
    often as a test restarts the app (tests/turnhelpers.opened)."""
    from tests.turnhelpers import opened

    return lambda: opened(db_path, chat_model(4000))


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteChatStore]:
    """A new, empty store on ``db_path``, closed when the test ends."""
    opened = SqliteChatStore(db_path)
    yield opened
    opened.close()


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> list[Size | None]:
    """Each layout of the screen, as it happens (scrolling takes Textual's fast path: no layout)."""
    seen: list[Size | None] = []
    refresh_layout = Screen._refresh_layout

    def counting(self: Screen[object], size: Size | None = None, scroll: bool = False) -> None:
        if not scroll:
            seen.append(size)
        refresh_layout(self, size, scroll)

    monkeypatch.setattr(Screen, "_refresh_layout", counting)
    return seen


@pytest.fixture
def clock() -> Clock:
    """A clock the memory tests move by hand (tests/memory_helpers.py)."""
    return Clock()


@pytest.fixture
def memory(store: SqliteChatStore, clock: Clock) -> MemoryService:
    """The memory service on the test store, with the offline assessor and the hand-moved clock."""
    from engine.memory.assessment import OfflineAssessor
    from engine.memory.service import MemoryService

    return MemoryService(store, OfflineAssessor(), COUNTER, clock=clock)
