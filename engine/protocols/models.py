"""The models the engine asks (the chat model, and curation's own: summarizer, curator) and the
token counter; ``providers/`` implements them, ``engine.text.tokens`` the counter."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.advice.calls import Price
from engine.chat import (
    PromptMessage,
)

if TYPE_CHECKING:
    from engine.advice.advice import AdviceOutcome, CuratorBrief
    from engine.protocols.embeddings import Embedder
    from engine.summaries.model import SummaryOutcome, SummaryRequest

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
    embedder: Embedder | None = None
    """The server's embedding model, for recall by meaning (``embeddings = "provider"``)."""


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
