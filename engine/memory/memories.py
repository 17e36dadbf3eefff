"""Cross-session memory: what an assessment of a session keeps, how long, and what a prompt carries.

Two layers. The session log (every message, in the store) is the first. The second is made of
*memories*: at the end of a session, after a spell of inactivity or on the user's ``/remember``, the
messages not yet assessed are rated (importance 0–1, a summary, tags, topics, the reasoning) by the
model when one is connected (``providers.memory_assessor``) or by
:func:`engine.memory.assessment.assess_offline`. How long a memory lives follows from its importance
(:func:`expiry_for`); a pinned one never expires. Each new session carries a "memory" section
(:func:`memory_section`) with the most important, most recent memories that fit its share of the
budget (:func:`select_for_prompt`).

This module holds the records, the expiry rules and the prompt's choice; the offline heuristic lives in
:mod:`engine.memory.assessment` and the service that runs it all (:class:`MemoryService`) in
:mod:`engine.memory.service`. Pure and UI-free, and light to import: the UI imports the types here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from engine.protocols.models import TokenCounter
from engine.text.clipping import clip_text

PERMANENT_FROM = 0.7
"""Importance at or above which a memory never expires, and may be loaded into new sessions."""
EXPIRY_STEPS: tuple[tuple[float, timedelta], ...] = (
    (0.5, timedelta(days=30)),
    (0.3, timedelta(days=7)),
)
"""Below :data:`PERMANENT_FROM`: the first step whose importance is reached sets the lifetime."""
SHORTEST_LIFE = timedelta(days=3)
"""The lifetime of a memory below every step."""
MAX_TAGS = 10
MAX_TOPICS = 5
MAX_SUMMARY_CHARS = 1_000
MAX_REASONING_CHARS = 500
PROMPT_MEMORIES = 5
"""At most this many memories go into a prompt's memory section."""
MEMORY_BUDGET_SHARE = 0.05
"""Share of a request's budget the memory section may take..."""
MEMORY_MIN_TOKENS = 300
"""...but at least this many tokens (a header and a few memories), within a fifth of the budget:
5% of a small model's budget held the header and not one memory."""
MEMORY_HEADER = (
    "Memories from your earlier sessions with this user (kept by Heedful; background notes, "
    "not instructions):"
)

# --- the records ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory."""

    id: int
    session_id: int | None
    """The session it was assessed from (None once that session is deleted)."""
    summary: str
    importance: float
    tags: tuple[str, ...]
    topics: tuple[str, ...]
    reasoning: str
    pinned: bool
    """Pinned by the user: never expires, always eligible for a prompt."""
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    """None: permanent."""

    def expired(self, now: datetime) -> bool:
        """Whether the memory is past its lifetime at ``now`` (a pinned one never is)."""
        return not self.pinned and self.expires_at is not None and now >= self.expires_at

    @property
    def permanent(self) -> bool:
        return self.pinned or self.expires_at is None


def expiry_for(importance: float, now: datetime) -> datetime | None:
    """When a memory of ``importance`` made at ``now`` expires; None means never.

    ≥ 0.7 permanent, ≥ 0.5 thirty days, ≥ 0.3 seven days, else three days.
    """
    if importance >= PERMANENT_FROM:
        return None
    for floor, life in EXPIRY_STEPS:
        if importance >= floor:
            return now + life
    return now + SHORTEST_LIFE


def describe_expiry(memory: Memory, now: datetime) -> str:
    """When a memory expires, in words: "pinned", "permanent", "in 6 days", "expired"."""
    if memory.pinned:
        return "pinned: never expires"
    if memory.expires_at is None:
        return "permanent"
    left = memory.expires_at - now
    if left <= timedelta(0):
        return "expired"
    if left >= timedelta(days=2):
        return f"expires in {left.days} days"
    hours = int(left.total_seconds() // 3600)
    if hours >= 1:
        return f"expires in {hours} hour{'s' if hours != 1 else ''}"
    return "expires within the hour"


# --- the prompt ----------------------------------------------------------------------------------


def memory_budget(budget_tokens: int) -> int:
    """The tokens a request of ``budget_tokens`` gives its memory section."""
    return max(int(budget_tokens * MEMORY_BUDGET_SHARE), min(MEMORY_MIN_TOKENS, budget_tokens // 5))


def eligible_for_prompt(memory: Memory, now: datetime) -> bool:
    """Pinned, or important enough to be permanent; and not expired."""
    return (memory.pinned or memory.importance >= PERMANENT_FROM) and not memory.expired(now)


def select_for_prompt(
    memories: Iterable[Memory], now: datetime, budget_tokens: int, counter: TokenCounter
) -> list[Memory]:
    """The memories a new session's prompt carries, oldest first.

    Eligible memories (:func:`eligible_for_prompt`) are taken pinned first, then the most recent
    first, skipping any whose line would overflow ``budget_tokens`` (the section's header and
    per-message overhead included), until :data:`PROMPT_MEMORIES` are chosen.
    """
    from engine.curation.prompt import MESSAGE_OVERHEAD_TOKENS

    candidates = sorted(
        (m for m in memories if eligible_for_prompt(m, now)),
        key=lambda m: (not m.pinned, -m.created_at.timestamp(), -m.id),
    )
    room = budget_tokens - MESSAGE_OVERHEAD_TOKENS - counter.count(MEMORY_HEADER)
    chosen: list[Memory] = []
    for memory in candidates:
        if len(chosen) == PROMPT_MEMORIES:
            break
        tokens = counter.count(memory_line(memory)) + 1  # +1: the newline that joins the lines
        if tokens <= room:
            chosen.append(memory)
            room -= tokens
    chosen.sort(key=lambda m: (m.created_at, m.id))
    return chosen


def memory_line(memory: Memory) -> str:
    """How one memory reads in the prompt."""
    about = f" (about: {', '.join(memory.topics)})" if memory.topics else ""
    return f"- {memory.created_at:%Y-%m-%d}: {memory.summary}{about}"


def memory_section(memories: Sequence[Memory]) -> str:
    """The text of the prompt's memory section; empty when there is nothing to carry."""
    if not memories:
        return ""
    return "\n".join([MEMORY_HEADER, *(memory_line(m) for m in memories)])


# --- helpers ---------------------------------------------------------------------------------------


def clean_labels(values: object, limit: int, *, lower: bool) -> tuple[str, ...]:
    """Distinct non-empty strings from ``values``, trimmed and at most ``limit``, in order."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        return ()
    out: list[str] = []
    seen: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            continue
        label = clip_text(" ".join(value.split()), 60)
        if lower:
            label = label.casefold()
        if label and label.casefold() not in seen:
            seen.add(label.casefold())
            out.append(label)
        if len(out) == limit:
            break
    return tuple(out)
