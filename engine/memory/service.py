"""The memory service: assesses sessions into memories, expires them, lets the user edit them and
gives new sessions their memory section (the rules it follows are in :mod:`engine.memory.memories`).

Pure and UI-free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from engine.chat import MessageStatus, PromptMessage, StoredMessage
from engine.curation.prompt import in_conversation
from engine.errors import StoreError
from engine.memory.assessed import Assessed, AssessedBy, Assessment
from engine.memory.assessment import assess_offline
from engine.memory.memories import (
    MAX_SUMMARY_CHARS,
    MAX_TAGS,
    PERMANENT_FROM,
    Memory,
    clean_labels,
    expiry_for,
    memory_section,
    select_for_prompt,
)
from engine.protocols.memory import MemoryAssessor, MemoryStore
from engine.protocols.models import TokenCounter
from engine.text.clipping import clip_text

_T = TypeVar("_T")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Remembered:
    """What :meth:`MemoryService.remember` did."""

    memory: Memory | None
    """The memory written; None when nothing was (nothing new, or memory is off)."""
    assessed: Assessed | None = None
    messages: int = 0
    """How many messages the assessment covered."""
    note: str = ""
    """One sentence for the user about what happened."""


UNASSESSED_PAGE = 500
"""Messages read at a time when gathering what a session added since its last assessment."""
ASSESSED_CHARS = 200_000
"""A longer stretch (a long session never assessed) is assessed by its most recent part: the
offline heuristic took over 5 s of CPU on 10,000 messages, and a model sees only its last 24,000
characters anyway."""
DISABLED_NOTE = "Cross-session memory is off (memory.enabled = false in your config)."
NOTHING_NEW_NOTE = "Nothing new to remember in this session."


class MemoryService:
    """Assesses sessions into memories, expires them and gives new sessions their memory section.

    UI-free: the app calls :meth:`remember` at the end of a session, after inactivity
    (:meth:`on_idle`) and on ``/remember``; :meth:`expire` at start-up. Implements
    :class:`engine.protocols.memory.MemorySource` for
    :class:`engine.curation.session_curations.SessionCurations`.

    Args:
        store: Where memories live.
        assessor: Rates a stretch of conversation (a model, or
            :class:`engine.memory.assessment.OfflineAssessor`).
        counter: Counts the memory section's tokens.
        clock: The current time (aware, UTC); tests inject one.
        inactivity_minutes: Idle time after which :meth:`on_idle` assesses the session.
        enabled: False turns memory off: nothing is assessed, and prompts carry no memory section.
    """

    def __init__(
        self,
        store: MemoryStore,
        assessor: MemoryAssessor,
        counter: TokenCounter,
        *,
        clock: Callable[[], datetime] = utc_now,
        inactivity_minutes: float = 30.0,
        enabled: bool = True,
    ) -> None:
        self.store = store
        self.assessor = assessor
        self.counter = counter
        self.clock = clock
        self.inactivity_seconds = inactivity_minutes * 60
        """How long a session must be idle before :meth:`on_idle` assesses it."""
        self.enabled = enabled
        self.on_change: Callable[[], None] | None = None
        """Called (in a worker thread) after memories change, so prompts take them up; the app sets
        it to ``SessionCurations.refresh_memory``."""
        self.new_session_budget: Callable[[], int] | None = None
        """The memory section's tokens in a new session's request (the app sets it to
        ``SessionCurations.new_session_memory_budget``): what :meth:`in_new_sessions` fits."""
        self._busy: dict[int, asyncio.Lock] = {}

    # --- triggers ------------------------------------------------------------------------------

    async def remember(self, session_id: int) -> Remembered:
        """Assess the session's messages since its last assessment into a memory.

        Two calls for the same session never assess the same messages twice: the second waits for
        the first and then finds nothing new.

        Raises:
            StoreError: The session could not be read or the memory not written.
        """
        if not self.enabled:
            return Remembered(None, note=DISABLED_NOTE)
        lock = self._busy.setdefault(session_id, asyncio.Lock())
        async with lock:
            messages, through = await asyncio.to_thread(self._unassessed, session_id)
            if not messages:
                return Remembered(None, note=NOTHING_NEW_NOTE)
            try:
                assessed = await self.assessor.assess(messages)
            except Exception as err:  # an assessor must not cost the user their memory
                offline = await asyncio.to_thread(assess_offline, messages)
                assessed = Assessed(offline, AssessedBy.HEURISTIC, type(err).__name__)
            memory = await asyncio.to_thread(self._write, session_id, assessed.assessment, through)
        return Remembered(memory, assessed, len(messages), _remembered_note(memory))

    async def on_idle(self, session_id: int, idle_seconds: float) -> Remembered | None:
        """Assess the session if it has been idle long enough; None when it has not (or memory is off)."""
        if not self.enabled or idle_seconds < self.inactivity_seconds:
            return None
        return await self.remember(session_id)

    async def expire(self) -> int:
        """Delete the memories past their expiry (pinned ones never); how many went."""
        return await asyncio.to_thread(self.expire_now)

    def expire_now(self) -> int:
        """:meth:`expire`, blocking (for start-up, before the app runs).

        Raises:
            StoreError: The store could not be written.
        """
        removed = self.store.expire_memories(self.clock())
        if removed:
            self._changed()
        return removed

    # --- the memory screen ---------------------------------------------------------------------

    async def memories(self) -> list[Memory]:
        """Every memory, newest first."""
        return await asyncio.to_thread(self.store.list_memories)

    async def edit(self, memory_id: int, summary: str) -> Memory:
        """Replace a memory's summary.

        Raises:
            ValueError: ``summary`` is blank.
            StoreError: There is no such memory, or the write failed.
        """
        clean = " ".join(summary.split())
        if not clean:
            raise ValueError("a memory's summary cannot be empty")
        summary = clip_text(clean, MAX_SUMMARY_CHARS)
        return await self._written(
            lambda: self.store.update_memory(memory_id, now=self.clock(), summary=summary)
        )

    async def rate(self, memory_id: int, importance: float) -> Memory:
        """Give a memory a new importance; its expiry starts again from now by the graduated rules."""
        if not 0 <= importance <= 1:
            raise ValueError(f"importance must be between 0 and 1, not {importance}")
        now = self.clock()
        return await self._written(
            lambda: self.store.update_memory(
                memory_id,
                now=self.clock(),
                importance=importance,
                set_expiry=True,
                expires_at=expiry_for(importance, now),
            )
        )

    async def retag(self, memory_id: int, tags: Sequence[str]) -> Memory:
        clean = clean_labels(tags, MAX_TAGS, lower=True)
        return await self._written(lambda: self.store.update_memory(memory_id, now=self.clock(), tags=clean))

    async def pin(self, memory_id: int, pinned: bool) -> Memory:
        """Pin (never expires, always eligible for prompts) or unpin a memory.

        Unpinning starts its expiry again from now, by its importance: a memory kept for months
        while pinned does not vanish the moment it is unpinned.
        """
        if pinned:
            return await self._written(
                lambda: self.store.update_memory(memory_id, now=self.clock(), pinned=True)
            )
        current = await asyncio.to_thread(self.store.get_memory, memory_id)
        if current is None:
            raise StoreError(f"There is no memory {memory_id}; it may have been deleted or expired.")
        expires_at = expiry_for(current.importance, self.clock())
        return await self._written(
            lambda: self.store.update_memory(
                memory_id, now=self.clock(), pinned=False, set_expiry=True, expires_at=expires_at
            )
        )

    async def delete(self, memory_id: int) -> None:
        """Delete a memory (the user asked for it)."""

        await self._written(lambda: self.store.delete_memory(memory_id))

    # --- the prompt ----------------------------------------------------------------------------

    def section_for(self, session_id: int | None, budget_tokens: int) -> str:
        """The memory section for a session's prompt: see :func:`select_for_prompt`.

        The session's own memories are left out (its log already holds them). A store that fails
        gives no section rather than a failed turn.
        """
        try:
            return memory_section(self._chosen(session_id, budget_tokens))
        except StoreError:
            return ""

    async def in_new_sessions(self) -> set[int] | None:
        """The ids of the memories a new session's request carries, chosen as :meth:`section_for`
        chooses them (None: the budget is not known)."""
        if self.new_session_budget is None:
            return None
        budget = self.new_session_budget()
        return {m.id for m in await asyncio.to_thread(self._chosen, None, budget)}

    def _chosen(self, session_id: int | None, budget_tokens: int) -> list[Memory]:
        if not self.enabled or budget_tokens <= 0:
            return []
        now = self.clock()
        candidates = self.store.memories_for_prompt(
            now, min_importance=PERMANENT_FROM, exclude_session=session_id
        )
        return select_for_prompt(candidates, now, budget_tokens, self.counter)

    # --- steps ---------------------------------------------------------------------------------

    def _unassessed(self, session_id: int) -> tuple[list[PromptMessage], int]:
        """The session's conversation after its last assessment (its most recent ASSESSED_CHARS),
        and the id it reaches.

        Read from the newest back, a page at a time, only as far as the assessment looks, not
        forward from the start of a long session never assessed.
        """
        if self.store.get_session(session_id) is None:
            return [], 0  # deleted (or being deleted, undoable): what the user threw away is not kept
        through = self.store.memory_through(session_id)
        newest_first: list[PromptMessage] = []
        chars = 0
        last: int | None = None
        for message in self._newest_first(session_id, after=through):
            if message.status is MessageStatus.STREAMING:
                # A reply being written is assessed next time, whole, with what follows it.
                newest_first, chars, last = [], 0, None
                continue
            if last is None:
                last = message.id
            # The offline model's digests describe the request, not the conversation.
            text = message.sent_text  # a reasoning model's thinking is not kept
            if in_conversation(message) and text.strip() and not message.is_digest:
                if newest_first and chars + len(text) > ASSESSED_CHARS:
                    break
                newest_first.append(PromptMessage(message.role, text))
                chars += len(text)
        return newest_first[::-1], last if last is not None else through

    def _newest_first(self, session_id: int, *, after: int) -> Iterator[StoredMessage]:
        """The session's shown messages after message ``after``, newest first, a page at a time."""
        before: int | None = None
        while page := self.store.message_page(session_id, before=before, limit=UNASSESSED_PAGE).messages:
            for message in reversed(page):
                if message.id <= after:
                    return
                yield message
            before = page[0].id

    def _write(self, session_id: int, assessment: Assessment, through: int) -> Memory:
        now = self.clock()
        memory = self.store.add_memory(
            session_id,
            summary=assessment.summary,
            importance=assessment.importance,
            tags=assessment.tags,
            topics=assessment.topics,
            reasoning=assessment.reasoning,
            now=now,
            expires_at=expiry_for(assessment.importance, now),
            through=through,
        )
        self._changed()
        return memory

    async def _written(self, write: Callable[[], _T]) -> _T:
        """Run ``write`` (a change to the store) in a worker thread, then tell ``on_change``."""

        def work() -> _T:
            done = write()
            self._changed()
            return done

        return await asyncio.to_thread(work)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


def _remembered_note(memory: Memory) -> str:
    life = "kept for good" if memory.expires_at is None else f"kept until {memory.expires_at:%Y-%m-%d}"
    return f"Remembered (importance {memory.importance:.2f}, {life}): {clip_text(memory.summary, 80)}"
