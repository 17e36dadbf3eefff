"""The turn pipeline: store the user's message, ask the model, store the reply as it streams.

A UI-free service. The app, ``heedful replay`` and the tests drive it alike: they iterate the
events of :meth:`TurnService.send` or :meth:`TurnService.retry` and render them however they like.

Durability rules (the user must never lose a message):
  * the user's message is committed before the request is sent;
  * the reply row exists from the moment the request starts and its text is saved every
    ``flush_interval`` seconds while it streams;
  * however the turn ends (finished, failed, cut, stopped by the user) the reply is left in a final
    state with whatever text arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from engine.chat import BuildProgress, StoredMessage
from engine.curation.budget import DEFAULT_PROFILE, Profile
from engine.curation.cold_store import ColdStore
from engine.curation.session_curations import SessionCurations
from engine.protocols.memory import MemorySource
from engine.protocols.models import NO_CURATION_MODELS, ChatModel, CurationModels, TokenCounter
from engine.protocols.store import ChatStore
from engine.text.terms import encodable
from engine.turn.events import ReplyResumed, ReplyStarted, SessionReloaded, TurnEvent, UserMessageSaved
from engine.turn.foreground import Foreground
from engine.turn.model_windows import ModelWindows
from engine.turn.pending_view import VIEW_DELAY, PendingView
from engine.turn.reply import ReplyRun, ReplyTools
from engine.turn.retrying import RetryPolicy
from engine.turn.steps import Planned, TurnSteps

if TYPE_CHECKING:
    # The curation engine is imported on first use, in a worker thread (see session_curations).
    from engine.advice.advice import CuratorBrief
    from engine.curation.context_service import ContextService
    from engine.curation.context_view import ContextView
    from engine.protocols.embeddings import Embedder
    from engine.protocols.vectors import VectorStore
    from engine.summaries.service import SummaryService
    from engine.turn.conversation_edits import ConversationEdits

T = TypeVar("T")

STOPPED_BY_USER = "Stopped by you."


def closed_by_signal(name: str) -> str:
    """What a reply cut off because Heedful was told to stop (SIGTERM, SIGHUP) says of it."""
    return f"Heedful was closed ({name}) before this reply finished."


class TurnService:
    """Runs turns of one conversation against one model.

    Store calls run in a worker thread (``asyncio.to_thread``) so a slow disk or a locked database
    never stalls the caller's event loop.
    """

    def __init__(
        self,
        store: ChatStore,
        model: ChatModel,
        counter: TokenCounter,
        *,
        system_prompt: str,
        profile: Profile = DEFAULT_PROFILE,
        flush_interval: float = 0.5,
        retry_policy: RetryPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        memory: MemorySource | None = None,
        curation_models: Callable[[ChatModel], CurationModels] | None = None,
        view_delay: float = VIEW_DELAY,
        recall: ColdStore | None = None,
    ) -> None:
        """
        Args:
            curation_models: The curator and summarizer that go with a chat model (asked again
                whenever the model changes; never for the offline model). None: the engine's
                heuristics and offline summaries only.
            view_delay: How long the model may take before the plan's view is begun (0: at once;
                see :mod:`engine.turn.pending_view`).
            recall: Where the messages before a long session's curated cut are found again, for
                requests that refer to them (see :mod:`engine.curation.cold_recall`); None: never.
        """
        self.store = store
        self.counter = counter
        self.retry_policy = retry_policy or RetryPolicy()
        self._flush_interval = flush_interval
        self._view_delay = view_delay
        self._clock = clock
        self._sleep = sleep
        self.windows = ModelWindows()
        self.curations = SessionCurations(
            store,
            counter,
            window=lambda: self.window,
            system_prompt=system_prompt,
            profile=profile,
            memory=memory,
            recall=recall,
        )
        self.steps = TurnSteps(store, counter, self.curations, lambda: self.model.name)
        self._curation_models = curation_models
        self._helpers = NO_CURATION_MODELS
        self._model_meaning: tuple[VectorStore | None, float | None] | None = None
        """Set by :meth:`use_model_embedder`: the cache and budget for each model's embedder."""
        self.stop_reason = STOPPED_BY_USER
        """What a reply cut off by cancelling its turn is marked with (the app being closed says so)."""
        self._summaries: SummaryService | None = None
        """Made on first use (it imports the curation engine)."""
        self.foreground = Foreground()
        """Whether a reply is being prepared: the summaries wait for its request to be out."""
        self.model = model

    @property
    def model(self) -> ChatModel:
        return self._model

    @model.setter
    def model(self, model: ChatModel) -> None:
        """Talk to ``model`` from the next request on, with the curation helpers that go with it."""
        self._model = model
        helpers = NO_CURATION_MODELS
        if self._curation_models is not None and not model.is_offline:
            helpers = self._curation_models(model)
        self._helpers = helpers
        self.curations.price = helpers.price
        self.curations.model_writes_summaries = helpers.summarizer is not None
        if self._model_meaning is not None:
            cache, budget = self._model_meaning
            self.use_embedder(helpers.embedder, cache=cache, budget=budget)

    async def warm_up(self) -> None:
        """Get the model, and the curator that goes with it, ready for the first request."""
        await self.model.warm_up()
        if self._helpers.curator is not None:
            await self._helpers.curator.warm_up()

    @property
    def window(self) -> int:
        """The context window curation budgets for: the configured one, or less if the server said so."""
        return self.windows.window(self.model)

    @property
    def system_prompt(self) -> str:
        return self.curations.system_prompt

    # --- what the app and its wiring ask of the curations (never their cache) ---------------------

    def set_pin_limit(self, share: float) -> None:
        """Let pins take ``share`` of the budget before another pin asks first."""
        self.curations.pin_limit = share

    def use_embedder(
        self, embedder: Embedder | None, *, cache: VectorStore | None = None, budget: float | None = None
    ) -> None:
        """Recall by meaning too, with ``embedder`` (see engine.curation.dense); None: words alone.

        Args:
            cache: Keeps its vectors between runs (for an embedder that costs a request).
            budget: Seconds a plan may spend asking it for new vectors (None: no limit).
        """
        curations = self.curations
        if embedder is None:
            curations.meaning = None
            return
        from engine.curation.dense import DenseTrouble, Meaning

        trouble = curations.meaning.trouble if curations.meaning is not None else DenseTrouble()
        curations.meaning = Meaning(embedder, trouble, cache, budget)  # taken up by each curation

    def use_model_embedder(self, *, cache: VectorStore | None = None, budget: float | None = None) -> None:
        """Recall by meaning with the embedding model of the chat model's own server, following
        the model: a session switched to another server (or offline) sends it no text for vectors."""
        self._model_meaning = (cache, budget)
        self.use_embedder(self._helpers.embedder, cache=cache, budget=budget)

    def refresh_memory(self) -> None:
        """The memories changed: cached curations take them up."""
        self.curations.refresh_memory()

    def new_session_memory_budget(self) -> int:
        """The tokens a new session's request gives its memory section (the config's profile, the
        current model's window)."""
        from engine.curation.budget import Budget
        from engine.memory.memories import memory_budget

        return memory_budget(Budget(self.window, self.curations.profile.budget_ratio).tokens)

    def building(self, session_id: int) -> BuildProgress | None:
        """How far a long session's curation has been read, while it is being read; else None."""
        return self.curations.building(session_id)

    def context_service(self) -> ContextService:
        """The user's own actions on the context (pin, restore, forget, ...), over these curations."""
        from engine.curation.context_service import ContextService

        return ContextService(self.curations)

    def edits(self) -> ConversationEdits:
        """Deleting a message, or editing one of the user's (the replies after it go)."""
        from engine.turn.conversation_edits import ConversationEdits

        return ConversationEdits(self.curations)

    async def write_summaries(self, session_id: int) -> int:
        """Have the model write the summaries the session's last plans asked for (run it in the
        background after a turn: it never holds up typing or sending); how many were written."""
        summarizer = self._helpers.summarizer
        if summarizer is None:
            return 0
        if self._summaries is None:
            from engine.summaries.service import SummaryService

            self._summaries = SummaryService(self.curations, quiet=self.foreground.quiet)
        return await self._summaries.run(session_id, summarizer)

    async def preview(self, session_id: int | None) -> ContextView:
        """What the context would look like if the last user message were sent now (changes nothing)."""
        return await self._io(self.steps.preview, session_id)

    def send(self, session_id: int | None, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Store ``text`` as the user's message (creating the session if needed), then reply to it."""
        return self._in_foreground(self._send(session_id, text))

    async def _send(self, session_id: int | None, text: str) -> AsyncGenerator[TurnEvent, None]:
        text = encodable(text)
        # The curator's brief is made in the same trip to a worker thread when nothing asked
        # before it can change it (the model's window is known): each trip waits for the loop.
        briefed = self._helpers.curator is not None and self.windows.asked(self.model)
        session, message, reloaded, brief = await self._io(
            self.steps.save_user_message, session_id, text, briefed
        )
        if reloaded:
            yield SessionReloaded(session.id, before=message.id)
        saved = UserMessageSaved(session, message)
        async for event in self._reply(
            session.id, superseded=(), saved=saved, brief=(brief,) if briefed else None
        ):
            yield event

    def resume(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        """Continue the session's last reply where it was cut off, in the same message.

        Raises:
            NothingToContinue: the last reply is whole, or there is none.
        """
        return self._in_foreground(self._resume(session_id))

    async def _resume(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        reloaded, cut = await self._io(self.steps.cut_reply, session_id)
        if reloaded:
            yield SessionReloaded(session_id)
        async for event in self._reply(session_id, superseded=(), resume=cut):
            yield event

    def retry(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        """Answer the session's last user message again, superseding the replies it already has."""
        return self._in_foreground(self._retry(session_id))

    async def _retry(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        reloaded, superseded = await self._io(self.steps.supersede_last_replies, session_id)
        self.curations.evict(session_id)  # the superseded replies leave the conversation
        if reloaded:
            yield SessionReloaded(session_id)
        async for event in self._reply(session_id, superseded=superseded):
            yield event

    async def _in_foreground(
        self, events: AsyncGenerator[TurnEvent, None]
    ) -> AsyncGenerator[TurnEvent, None]:
        """``events``, with :attr:`foreground` holding the summaries back until the request is out."""
        preparing = self.foreground.begin()
        try:
            async with contextlib.aclosing(events) as stream:
                async for event in stream:
                    if isinstance(event, ReplyStarted | ReplyResumed):
                        self.foreground.end(preparing)
                    yield event
        finally:
            self.foreground.end(preparing)

    # --- the reply ----------------------------------------------------------------------------

    def _reply(
        self,
        session_id: int,
        *,
        superseded: tuple[int, ...],
        resume: StoredMessage | None = None,
        saved: UserMessageSaved | None = None,
        brief: tuple[CuratorBrief | None] | None = None,
    ) -> AsyncGenerator[TurnEvent, None]:
        """Plan, send and stream one reply (see :class:`engine.turn.reply.ReplyRun`)."""
        tools = ReplyTools(
            model=self.model,
            curator=self._helpers.curator,
            steps=self.steps,
            windows=self.windows,
            retry_policy=self.retry_policy,
            io=self._io,
            pending_view=self._pending_view,
            clock=self._clock,
            sleep=self._sleep,
            flush_interval=self._flush_interval,
            view_delay=self._view_delay,
            stop_reason=lambda: self.stop_reason,
        )
        run = ReplyRun(tools, session_id, superseded, resume=resume, saved=saved, brief=brief)
        return run.events()

    def _view(self, session_id: int, planned: Planned) -> ContextView:
        """What the UI shows of a plan (not needed to send it: built while the request is out)."""
        return self.steps.view(session_id, planned)

    def _pending_view(self, session_id: int, planned: Planned, delay: float) -> PendingView:
        """:meth:`_view` of ``planned``, begun in a worker thread after ``delay`` or when wanted."""
        return PendingView(functools.partial(self._io, self._view, session_id, planned), delay=delay)

    async def _io(self, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)
