"""Cross-session memory's store and assessor (:mod:`engine.memory.service`); ``sessions/`` and
``providers/`` implement them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from engine.chat import (
    MessagePage,
    PromptMessage,
    Session,
)

if TYPE_CHECKING:
    from engine.memory.assessed import Assessed
    from engine.memory.memories import Memory

# --- cross-session memory (engine.memory.memories) -------------------------------------------------------


class MemoryStore(Protocol):
    """The memories table and the session bookkeeping an assessment needs. Every method commits.

    ``sessions.store.SqliteChatStore`` implements it; times come from the caller's clock.
    """

    def get_session(self, session_id: int) -> Session | None: ...

    def message_page(
        self, session_id: int, *, before: int | None = None, after: int | None = None, limit: int
    ) -> MessagePage:
        """As :meth:`ChatStore.message_page`."""
        ...

    def memory_through(self, session_id: int) -> int:
        """The id of the last message of the session an assessment covered (0: none yet).

        Raises:
            StoreError: There is no such session.
        """
        ...

    def add_memory(
        self,
        session_id: int | None,
        *,
        summary: str,
        importance: float,
        tags: Sequence[str] = (),
        topics: Sequence[str] = (),
        reasoning: str = "",
        now: datetime,
        expires_at: datetime | None,
        through: int | None = None,
    ) -> Memory:
        """Store a memory and, with ``through``, advance the session's ``memory_through``: one transaction."""
        ...

    def list_memories(self) -> list[Memory]: ...

    def get_memory(self, memory_id: int) -> Memory | None: ...

    def update_memory(
        self,
        memory_id: int,
        *,
        now: datetime,
        summary: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        pinned: bool | None = None,
        set_expiry: bool = False,
        expires_at: datetime | None = None,
    ) -> Memory: ...

    def delete_memory(self, memory_id: int) -> None: ...

    def expire_memories(self, now: datetime) -> int:
        """Delete the memories past their expiry at ``now`` (never pinned ones); how many went."""
        ...

    def memories_for_prompt(
        self,
        now: datetime,
        *,
        min_importance: float,
        exclude_session: int | None = None,
        limit: int = 50,
    ) -> list[Memory]: ...


class MemoryAssessor(Protocol):
    """Rates a stretch of conversation for cross-session memory (a model, or the offline heuristic)."""

    async def assess(self, messages: Sequence[PromptMessage]) -> Assessed:
        """The assessment of ``messages``; never raises for a failing model (it falls back)."""
        ...


class MemorySource(Protocol):
    """Gives each session's prompt its memory section (``engine.curation.session_curations`` asks it)."""

    def section_for(self, session_id: int | None, budget_tokens: int) -> str:
        """The memory section for ``session_id`` (None: a session not created yet), within
        ``budget_tokens``; empty when there is nothing to carry. Never raises."""
        ...
