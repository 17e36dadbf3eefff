"""The small interfaces through which the engine reaches the outside world.

``sessions.store.SqliteChatStore`` implements :class:`ChatStore`; ``providers.openai_chat`` and
``providers.offline`` implement :class:`ChatModel`; ``engine.text.tokens`` implements
:class:`TokenCounter`. Tests use the real implementations against a temporary database and a
loopback fake server.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from engine.advice.calls import CallUsage, Price
from engine.chat import (
    HistoryCut,
    MessagePage,
    MessageStatus,
    PromptMessage,
    Role,
    Session,
    SessionSettings,
    StoredMessage,
)
from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.curation.ledger import LedgerEntry
from engine.entities.registry import EntityRecord

if TYPE_CHECKING:
    from engine.advice.advice import AdviceOutcome, CuratorBrief
    from engine.memory.assessed import Assessed
    from engine.memory.memories import Memory
    from engine.summaries.model import StoredSummary, SummaryOutcome, SummaryRequest
    from engine.text.analysis import Analysis

# --- the model -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token usage as the server reported it (the last chunk of a stream)."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class ReplyFinished:
    """The model said it had finished (``finish_reason`` from the protocol: stop, length, ...)."""

    finish_reason: str


ModelEvent = TextDelta | UsageReport | ReplyFinished


class ChatModel(Protocol):
    """Something that answers a list of messages with a stream of events."""

    @property
    def name(self) -> str:
        """The model's name as the user knows it (shown in the header)."""
        ...

    @property
    def is_offline(self) -> bool:
        """True for the built-in offline model, which answers locally."""
        ...

    @property
    def context_window(self) -> int:
        """The model's context window in tokens."""
        ...

    async def warm_up(self) -> None:
        """Get ready for the first request (load libraries, build clients) without holding up the
        caller: called once the app is on screen, so the first turn does not pay for it."""
        ...

    async def window_limit(self) -> int | None:
        """The context window the server says the model has, if it says (asked once, cached).

        The engine budgets for the smaller of this and :attr:`context_window`.
        """
        ...

    def stream(
        self, messages: Sequence[PromptMessage], *, temperature: float | None = None
    ) -> AsyncGenerator[ModelEvent, None]:
        """Stream the reply to ``messages`` (at ``temperature``, or the server's default when None).

        Yields :class:`TextDelta` events, at most one :class:`UsageReport`, and ends with exactly one
        :class:`ReplyFinished`. Raises :class:`engine.errors.ModelError` on any failure, including
        a stream that ends without saying it finished.
        """
        ...

    async def aclose(self) -> None:
        """Release connections; the model may still be used afterwards."""
        ...


# --- curation's own model calls (engine.summaries.model, engine.advice.advice) ----------------


class ModelSummarizer(Protocol):
    """Writes summaries with a model (``providers.openai_summarizer``)."""

    @property
    def model(self) -> str:
        """The name of the model that writes the summaries."""
        ...

    async def summarize(self, request: SummaryRequest) -> SummaryOutcome:
        """A summary of ``request``'s source that keeps every one of its entities; never raises
        for a failing model (the outcome's text is None and its problem says why)."""
        ...

    async def aclose(self) -> None:
        """Close the connection kept between summaries (a later one opens another)."""
        ...


class CuratorModel(Protocol):
    """Advises the curation engine each turn (``providers.openai_curator``)."""

    @property
    def model(self) -> str:
        """The name of the model that advises."""
        ...

    @property
    def timeout(self) -> float:
        """Seconds :meth:`advise` may take before it gives up (the request waits meanwhile)."""
        ...

    @property
    def resting(self) -> bool:
        """The model failed several times in a row and is not being asked for now: :meth:`advise`
        answers at once, with no advice and the reason."""
        ...

    async def advise(self, brief: CuratorBrief) -> AdviceOutcome:
        """The model's advice on ``brief``, within its time limit; never raises (on any failure
        the outcome's advice is None and its problem says why)."""
        ...

    async def warm_up(self) -> None:
        """Get ready for the first pass (build the client) without holding up the caller; never
        raises (a pass that cannot be made ready says why when it is made)."""
        ...

    async def aclose(self) -> None:
        """Close the connection kept between passes (a later pass opens another)."""
        ...


@dataclass(frozen=True, slots=True)
class CurationModels:
    """What a connected chat model brings to curation: the curator pass, summaries, their price.

    They go with the chat model in use: a session switched to another model (a local one, say)
    is never sent to the first model's server for curation.
    """

    curator: CuratorModel | None = None
    summarizer: ModelSummarizer | None = None
    price: Price | None = None
    """What the curation model's tokens cost, when known (the panel's estimate)."""


NO_CURATION_MODELS = CurationModels()


# --- tokens ----------------------------------------------------------------------------------


class TokenCounter(Protocol):
    """Counts tokens the way the model would, or as near as can be done offline."""

    @property
    def exact(self) -> bool:
        """False when the count is an approximation (the UI then shows "~")."""
        ...

    @property
    def description(self) -> str:
        """What the counter uses, for the UI (e.g. "cl100k_base (offline copy)")."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


# --- curation state ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """What the engine decided about one message, as the store keeps it."""

    message_id: int
    state: ItemState
    pinned: bool = False
    kept_by_user: bool = False
    summary: str | None = None
    forgotten: bool = False


@dataclass(frozen=True, slots=True)
class CurationSnapshot:
    """A session's stored curation state: everything not derivable from the messages themselves."""

    items: dict[int, ItemRecord]
    entities: list[EntityRecord]
    policy: ConsentChoice | None = None
    saved_tokens: int = 0
    """Tokens curation has saved over the session's turns."""


# --- the store -------------------------------------------------------------------------------


class ChatStore(Protocol):
    """Sessions and their messages. Every method commits before it returns.

    Methods are synchronous and quick; async callers run them in a thread, so an implementation
    must be safe to call from any one thread at a time.
    """

    def create_session(self, title: str) -> Session: ...

    def get_session(self, session_id: int) -> Session | None: ...

    def latest_session(self) -> Session | None:
        """The most recently updated session, or None when there is none."""
        ...

    def list_sessions(self) -> list[Session]:
        """All sessions, the most recently updated first."""
        ...

    def rename_session(self, session_id: int, title: str) -> Session: ...

    def delete_session(self, session_id: int) -> None:
        """Delete a session and its messages (the user asked for it)."""
        ...

    def add_message(
        self,
        session_id: int,
        role: Role,
        content: str,
        *,
        status: MessageStatus = MessageStatus.COMPLETE,
        tokens: int | None = None,
        model: str | None = None,
    ) -> StoredMessage:
        """Append a message to a session and touch the session's ``updated_at``."""
        ...

    def update_message(
        self,
        message_id: int,
        *,
        content: str | None = None,
        status: MessageStatus | None = None,
        tokens: int | None = None,
        error: str | None = None,
    ) -> StoredMessage:
        """Change the given fields of a message; fields left as None keep their value."""
        ...

    def changed_elsewhere(self, session_id: int) -> bool:
        """Whether another Heedful on the same database changed the session's messages (added,
        edited) since this store last wrote to it or looked; asking counts as looking."""
        ...

    def messages(self, session_id: int) -> list[StoredMessage]:
        """A session's messages in the order they were added, superseded ones included."""
        ...

    def messages_after(self, session_id: int, message_id: int, *, limit: int) -> list[StoredMessage]:
        """Up to ``limit`` of the session's messages after ``message_id`` (superseded ones too),
        oldest first: a long history read a part at a time."""
        ...

    def message_text(self, message_id: int) -> str:
        """A message's text; :class:`StoreError` if there is no such message."""
        ...

    def message_page(
        self, session_id: int, *, before: int | None = None, after: int | None = None, limit: int
    ) -> MessagePage:
        """Up to ``limit`` of the session's shown messages: the latest before message ``before``
        (the latest of all when both are None), or the earliest after message ``after``."""
        ...

    def history_cut(self, session_id: int, keep: int) -> HistoryCut | None:
        """Where to cut the session so that only its latest ``keep`` messages (superseded ones
        included) are curated; None when it holds no more than that."""
        ...

    def load_curation(self, session_id: int, *, after: int = 0) -> CurationSnapshot:
        """A session's item states (of its messages after message ``after``), entity registry and
        consent policy."""
        ...

    def load_analyses(
        self, session_id: int, version: int, *, after: int = 0, upto: int | None = None
    ) -> Mapping[int, Analysis]:
        """The stored analyses of a session's messages (by message id) written at ``version``,
        of the messages with ids in (``after``, ``upto``]; a message whose text changed since its
        analysis has none."""
        ...

    def save_analyses(self, version: int, analyses: Sequence[tuple[int, Analysis]]) -> None:
        """Store analyses (message id, analysis) made at ``version``; messages gone since are skipped."""
        ...

    def add_curation_calls(self, session_id: int, usage: CallUsage) -> None:
        """Add ``usage`` to what the session's curation calls (curator, summaries) have cost."""
        ...

    def curation_calls(self, session_id: int) -> CallUsage:
        """What the session's curation calls have cost so far (nothing for a new session)."""
        ...

    def load_summaries(self, session_id: int) -> list[StoredSummary]:
        """The model summaries stored for a session's messages (none of a message whose text changed)."""
        ...

    def save_summary(self, summary: StoredSummary) -> None:
        """Store a model's summary of a message (replacing one of the same level); a summary of a
        message that is gone, or whose text no longer has ``summary.source_hash``, is skipped."""
        ...

    def save_curation(
        self,
        session_id: int,
        *,
        items: Sequence[ItemRecord],
        entities: Sequence[EntityRecord],
        ledger: Sequence[LedgerEntry],
        policy: ConsentChoice | None = None,
        policy_changed: bool = False,
        saved_tokens: int = 0,
    ) -> None:
        """Write state changes and their ledger entries in one transaction."""
        ...

    def ledger(self, session_id: int, *, target: str | None = None) -> list[LedgerEntry]:
        """A session's ledger, oldest first; only the entries about ``target`` when given."""
        ...

    def session_settings(self, session_id: int) -> SessionSettings:
        """The session's own settings (all None for a session that has none, or no such session)."""
        ...

    def update_session_settings(self, session_id: int, settings: SessionSettings) -> None:
        """Replace the session's own settings."""
        ...

    def get_state(self, key: str) -> str | None:
        """App state the app itself wrote (theme, last session), never user config."""
        ...

    def set_state(self, key: str, value: str) -> None: ...

    def checkpoint(self) -> None:
        """Do now, while nothing waits for the store, upkeep that would otherwise fall inside a
        later write (SQLite: copying its write-ahead log into the database file)."""
        ...

    def close(self) -> None: ...


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
        """The id of the last message of the session an assessment covered (0: none yet)."""
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
