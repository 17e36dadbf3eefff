"""Cross-session memories in the store (see :mod:`engine.memory.memories` and :mod:`sessions.memory_records`).

A mixin of :class:`sessions.store.SqliteChatStore`: each method runs its records function in the
store's locked connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from engine.memory.memories import Memory

# sessions.memory_records (and the engine's memories) are imported by each method: the first
# frame reads messages only (tests/test_first_paint.py).

_T = TypeVar("_T")


class MemoryMethods:
    """The memories half of the store (see the module)."""

    # Provided by SqliteChatStore.
    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

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
        """Store a memory; with ``through``, also note that the session is assessed up to that message.

        Both in one transaction, so a memory is never written twice for the same messages.

        Raises:
            StoreError: The write failed (the session may have been deleted), nothing changed.
        """
        from sessions import memory_records

        return self._run(
            lambda conn: memory_records.add(
                conn,
                session_id,
                summary=summary,
                importance=importance,
                tags=tags,
                topics=topics,
                reasoning=reasoning,
                now=now,
                expires_at=expires_at,
                through=through,
            )
        )

    def list_memories(self) -> list[Memory]:
        """Every memory, expired ones included until :meth:`expire_memories` removes them; newest first."""
        from sessions import memory_records

        return self._run(memory_records.list_all)

    def get_memory(self, memory_id: int) -> Memory | None:
        from sessions import memory_records

        return self._run(lambda conn: memory_records.get(conn, memory_id))

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
    ) -> Memory:
        """Change the given fields of a memory (None keeps a field); ``set_expiry`` writes ``expires_at``.

        Raises:
            StoreError: There is no such memory, or the write failed.
        """
        from sessions import memory_records

        return self._run(
            lambda conn: memory_records.update(
                conn,
                memory_id,
                now=now,
                summary=summary,
                importance=importance,
                tags=tags,
                pinned=pinned,
                set_expiry=set_expiry,
                expires_at=expires_at,
            )
        )

    def delete_memory(self, memory_id: int) -> None:
        """Delete a memory (the user asked for it).

        Raises:
            StoreError: There is no such memory, or the write failed.
        """
        from sessions import memory_records

        self._run(lambda conn: memory_records.delete(conn, memory_id))

    def expire_memories(self, now: datetime) -> int:
        """Delete every memory past its expiry at ``now`` (pinned ones never); how many went."""
        from sessions import memory_records

        return self._run(lambda conn: memory_records.expire(conn, now))

    def memories_for_prompt(
        self,
        now: datetime,
        *,
        min_importance: float,
        exclude_session: int | None = None,
        limit: int = 50,
    ) -> list[Memory]:
        """Candidates for a prompt's memory section: pinned or at least ``min_importance``, not
        expired at ``now``, not from ``exclude_session``; pinned first, then newest first.
        :func:`engine.memory.memories.select_for_prompt` makes the final choice."""
        from sessions import memory_records

        return self._run(
            lambda conn: memory_records.for_prompt(
                conn, now, min_importance=min_importance, exclude_session=exclude_session, limit=limit
            )
        )

    def memory_through(self, session_id: int) -> int:
        """The id of the last message of the session an assessment covered (0: none yet).

        Raises:
            StoreError: There is no such session.
        """
        from sessions import memory_records

        return self._run(lambda conn: memory_records.memory_through(conn, session_id))
