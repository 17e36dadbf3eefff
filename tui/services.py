"""What the app is handed at start-up: the store, the turn service and facts about them.

Built by ``cli.chat`` before the app starts, so the app and its screens never open databases or
construct model clients themselves.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    # Types only: the engine loads after the first frame (see AppServices.engine).
    from engine.curation.context_service import ContextService
    from engine.memory.service import MemoryService
    from engine.protocols.models import ChatModel
    from engine.protocols.store import ChatStore
    from engine.text.tokens import LazyTokenCounter
    from engine.turn.service import TurnService

if TYPE_CHECKING:
    from providers.catalog import Target
    from providers.model_offers import Listing
    from providers.resolve import ModelChoice

Severity = Literal["information", "warning", "error"]

THEME_STATE_KEY = "theme"
"""App-state key of the theme the user chose last."""


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user must be told once the first screen is up."""

    text: str
    severity: Severity = "information"


class ModelSource(Protocol):
    """Models by name (a session's /model), built by the wiring so the app never constructs clients."""

    @property
    def default(self) -> ChatModel: ...

    def get(self, name: str) -> tuple[ChatModel, tuple[str, ...]]:
        """The model called ``name``, and notices for the user about it."""
        ...

    def use(self, choice: ModelChoice) -> ChatModel:
        """The model a :class:`Target` chose."""
        ...

    def where(self, model: ChatModel) -> str | None:
        """The provider (or server host) ``model`` talks to, for the header; None offline."""
        ...

    async def find(self, name: str, current: ChatModel) -> Target | str:
        """Where ``/model NAME`` leads from ``current``, or why it leads nowhere."""
        ...

    async def listings(self, current: ChatModel) -> list[Listing]:
        """Each provider's models, from the config and its server's ``GET /models``."""
        ...

    async def aclose(self) -> None:
        """Close every model's connections (and their curation helpers'), as the app closes."""
        ...


@dataclass(slots=True)
class EngineServices:
    """What only sending, curating and counting need: loaded once the first frame is drawn."""

    turns: TurnService
    models: ModelSource
    """The session's /model choice, or the app's default."""
    context: ContextService
    """The user's actions on the context (pin, restore, forget, consent, inspect, draft preview)."""
    memory: MemoryService
    """Cross-session memory: ``remember`` (session end, idle, /remember), the memory screen's edits."""
    counter: LazyTokenCounter
    notices: list[Notice] = field(default_factory=list)
    """Found while loading, for the user once it is done."""


class EngineNotReady(RuntimeError):
    """The engine was used before it was loaded: await :meth:`AppServices.engine` first."""


@dataclass(slots=True)
class AppServices:
    """The store and the facts the first frame shows, and the engine behind them, loaded later."""

    store: ChatStore
    load: Callable[[], EngineServices]
    """Builds the engine (blocking, run once, in a thread by :meth:`engine`)."""
    first_model: str
    """The model the badge names until the engine is loaded (then the turn service's model)."""
    first_offline: bool
    config_path: Path
    database_path: Path
    notices: list[Notice] = field(default_factory=list)
    session_id: int | None = None
    """Open this session instead of the latest one."""
    keys: dict[str, str] = field(default_factory=dict)
    """The config's ``[keys]``: action id → key(s), checked by the app against its bindings."""
    _engine: EngineServices | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def ready(self) -> bool:
        """The engine is loaded: sending, curating and counting go ahead at once."""
        return self._engine is not None

    def load_engine(self) -> EngineServices:
        """The engine, built now if it is not yet (blocking; safe from any thread, built once)."""
        with self._lock:
            if self._engine is None:
                self._engine = self.load()
            return self._engine

    async def engine(self) -> EngineServices:
        """The engine, loading it in a thread (not on the event loop) if it is not loaded yet."""
        if self._engine is not None:
            return self._engine
        return await asyncio.to_thread(self.load_engine)

    @property
    def loaded(self) -> EngineServices:
        if self._engine is None:
            raise EngineNotReady("the engine is used before it is loaded")
        return self._engine

    @property
    def turns(self) -> TurnService:
        return self.loaded.turns

    @property
    def models(self) -> ModelSource:
        return self.loaded.models

    @property
    def context(self) -> ContextService:
        return self.loaded.context

    @property
    def memory(self) -> MemoryService:
        return self.loaded.memory

    @property
    def counter(self) -> LazyTokenCounter:
        return self.loaded.counter

    @property
    def model_name(self) -> str:
        return self._engine.turns.model.name if self._engine is not None else self.first_model

    @property
    def offline(self) -> bool:
        return self._engine.turns.model.is_offline if self._engine is not None else self.first_offline
