"""What the memory tests share: an injected clock, sample conversations and memories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engine.chat import PromptMessage
from engine.memory.memories import Memory, expiry_for
from engine.text.tokens import LazyTokenCounter, load_counter

COUNTER = LazyTokenCounter(lambda: load_counter("gpt-4"))
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

DECISIONS = [
    PromptMessage("user", "Let's use PostgreSQL 16 for the billing service; I prefer asyncpg over psycopg."),
    PromptMessage("assistant", "Agreed: billing runs on PostgreSQL 16 with asyncpg, max_connections = 20."),
    PromptMessage("user", "We decided the API lives in billing/api.py and ships on 3 May 2025."),
    PromptMessage("assistant", "Noted: billing/api.py, release on 3 May 2025."),
]
CHIT_CHAT = [
    PromptMessage("user", "hi there"),
    PromptMessage("assistant", "Hello! How are you?"),
    PromptMessage("user", "ok thanks"),
    PromptMessage("assistant", "Sure."),
    PromptMessage("user", "bye"),
]


class Clock:
    """An injected clock that tests move by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def memory_at(
    importance: float, created: datetime, *, pinned: bool = False, id_: int = 1, **kw: object
) -> Memory:
    fields: dict[str, object] = {
        "id": id_,
        "session_id": None,
        "summary": f"summary {id_}",
        "importance": importance,
        "tags": (),
        "topics": (),
        "reasoning": "",
        "pinned": pinned,
        "created_at": created,
        "updated_at": created,
        "expires_at": expiry_for(importance, created),
    }
    fields.update(kw)
    return Memory(**fields)  # type: ignore[arg-type]
