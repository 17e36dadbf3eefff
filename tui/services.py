"""What the app is handed at start-up: the store, the turn service and facts about them.

Built by ``cli.chat`` before the app starts, so the app and its screens never open databases or
construct model clients themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from engine.context_service import ContextService
from engine.memory_service import MemoryService
from engine.protocols import ChatModel, ChatStore
from engine.tokens import LazyTokenCounter
from engine.turn import TurnService

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
class AppServices:
    store: ChatStore
    turns: TurnService
    models: ModelSource
    """The session's /model choice, or the app's default."""
    context: ContextService
    """The user's actions on the context (pin, restore, forget, consent, inspect, draft preview)."""
    memory: MemoryService
    """Cross-session memory: ``remember`` (session end, idle, /remember), the memory screen's edits."""
    counter: LazyTokenCounter
    config_path: Path
    database_path: Path
    notices: list[Notice] = field(default_factory=list)
    session_id: int | None = None
    """Open this session instead of the latest one."""
    keys: dict[str, str] = field(default_factory=dict)
    """The config's ``[keys]``: action id → key(s), checked by the app against its bindings."""

    @property
    def model_name(self) -> str:
        return self.turns.model.name

    @property
    def offline(self) -> bool:
        return self.turns.model.is_offline
