"""One reply of a turn, in named steps: advise, plan, stream (retrying, or budgeting for less),
finish. :class:`ReplyRun` owns the reply's state; :class:`engine.turn.service.TurnService` makes
one per reply and passes on the events it yields."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.chat import PromptMessage, StoredMessage
from engine.curation.prompt import continuation
from engine.errors import ModelError, ModelErrorKind
from engine.protocols.models import ChatModel, CuratorModel, ReplyFinished, TextDelta, UsageReport
from engine.text.redaction import redact
from engine.text.thinking import ThinkingSplitter
from engine.turn.early_stream import EarlyStream
from engine.turn.events import (
    ContextCurated,
    CuratorAsked,
    ReplyCompleted,
    ReplyFailed,
    ReplyResumed,
    ReplyStarted,
    ReplyTextArrived,
    RetryScheduled,
    TurnEvent,
    TurnNotice,
    UserMessageSaved,
)
from engine.turn.model_windows import ModelWindows, tightened_notice
from engine.turn.pending_view import PendingView
from engine.turn.retrying import RetryPolicy
from engine.turn.steps import Planned, TurnSteps

if TYPE_CHECKING:
    from engine.advice.advice import AdviceOutcome, CuratorBrief

QUIET_ADVICE = 0.1
"""Seconds the curator model may take before the user is shown that it is asked (and their message
is drawn): one that answers sooner leaves the drawing until the request is out, as when it is not
asked (drawn meanwhile, the message held up the plan on the same interpreter)."""


def unplanned(error: Exception) -> str:
    """What a reply ended by an error of Heedful's own says of it."""
    return redact(f"Stopped by an error in Heedful ({type(error).__name__}: {error}).")


@dataclass(frozen=True, slots=True)
class ReplyTools:
    """What a reply needs of its turn service: the model, the steps it runs in worker threads,
    and the service's settings (read when the reply begins)."""

    model: ChatModel
    curator: CuratorModel | None
    steps: TurnSteps
    windows: ModelWindows
    retry_policy: RetryPolicy
    io: Callable[..., Awaitable[Any]]
    """Runs a blocking step in a worker thread."""
    pending_view: Callable[[int, Planned, float], PendingView]
    clock: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]
    flush_interval: float
    view_delay: float
    stop_reason: Callable[[], str]


@dataclass
class ReplyRun:
    """One reply: planned, sent and streamed, and left in a final state however it ends."""

    tools: ReplyTools
    session_id: int
    superseded: tuple[int, ...] = ()
    resume: StoredMessage | None = None
    saved: UserMessageSaved | None = None
    """The user's message just stored, reported once the request is on its way (drawing it would
    otherwise hold up planning), or before anything that may keep the request waiting."""
    brief: tuple[CuratorBrief | None] | None = None
    """The curator's brief, made already (None: made here, if there is a curator)."""
    outcome: AdviceOutcome | None = None
    arrived: list[str] = field(default_factory=list)
    usage: UsageReport | None = None
    retries: int = 0
    tightened: bool = False

    async def events(self) -> AsyncGenerator[TurnEvent, None]:
        """Advise, plan, stream, finish: what the user sees of each, in order."""
        async with contextlib.aclosing(self._advise()) as advising:
            async for event in advising:
                yield event
        try:
            self.planned, self.temperature, self.reply = await self.tools.io(
                self.tools.steps.prepare, self.session_id, self.resume, self.outcome
            )
        except Exception:
            if self.saved is not None:
                yield self.saved  # stored all the same: the user must see it (and not send it twice)
            raise
        self.prefix = self.resume.content if self.resume is not None else ""
        self.last_flush = self.tools.clock()
        # Sent now: the server works while the UI draws the context and the reply's place.
        self.early: EarlyStream | None = EarlyStream(
            self.tools.model.stream(self._request(), temperature=self.temperature)
        )
        self.pending = self.tools.pending_view(self.session_id, self.planned, self.tools.view_delay)
        try:
            async with contextlib.aclosing(self._stream()) as streaming:
                async for event in streaming:
                    yield event
        except ModelError as err:
            async with contextlib.aclosing(self._failed(err)) as failing:
                async for event in failing:
                    yield event
            return
        except (asyncio.CancelledError, GeneratorExit):
            self._stopped()
            raise
        except Exception as err:
            await self._unplanned(err)
            raise
        done = await self.tools.io(
            self.tools.steps.complete, self.session_id, self.reply.id, self._text(), self.resume is not None
        )
        if (planned_view := await self.pending.rest()) is not None:
            yield planned_view  # begun before the reply was whole; the outcome stays last
        yield ReplyCompleted(done, self.usage)

    # --- the steps ----------------------------------------------------------------------------

    async def _advise(self) -> AsyncGenerator[TurnEvent, None]:
        """Learn the model's window, and ask the curator model's advice: a continued reply goes on
        with the plan it had, and there is none without a curator."""
        tools = self.tools
        if not tools.windows.asked(tools.model) and self.saved is not None:
            yield self._take_saved()
        notice = await tools.windows.learn(tools.model)
        if notice is not None:
            yield notice
        curator = tools.curator
        if curator is None or self.resume is not None:
            return
        made = self.brief[0] if self.brief is not None else await tools.io(tools.steps.brief, self.session_id)
        if made is not None and curator.resting:
            self.outcome = await curator.advise(made)  # at once: no advice, and why
        elif made is not None:
            advising = asyncio.ensure_future(curator.advise(made))
            try:
                if not (await asyncio.wait({advising}, timeout=QUIET_ADVICE))[0]:
                    if self.saved is not None:
                        yield self._take_saved()
                    yield CuratorAsked(curator.model, curator.timeout)
                self.outcome = await advising
            finally:
                advising.cancel()  # a stop meanwhile ends the pass too (done: nothing to cancel)

    async def _stream(self) -> AsyncGenerator[TurnEvent, None]:
        """Stream the reply, asking again after a failure the retry policy allows, and once with a
        smaller budget when the server says the request is too long."""
        if self.early is not None:
            await self.early.under_way()  # out before the message and the reply's place are drawn
        if self.saved is not None:
            yield self._take_saved()
        # The reply's place right after the message: the screen lays both out at once.
        yield ReplyStarted(self.reply, self.superseded) if self.resume is None else ReplyResumed(self.reply)
        if (said := self.tools.steps.dense_notice()) is not None:
            yield TurnNotice(said)
        while True:
            try:
                async with contextlib.aclosing(self._attempt()) as attempt:
                    async for event in attempt:
                        yield event
                return
            except ModelError as err:
                async with contextlib.aclosing(self._after_failure(err)) as recovering:
                    async for event in recovering:
                        yield event

    async def _attempt(self) -> AsyncGenerator[TurnEvent, None]:
        """One request's stream, to the model's end of the reply."""
        tools = self.tools
        # A reasoning model thinks again before it goes on: only the rest of its answer is added.
        answer_only = ThinkingSplitter() if self.resume is not None and self.resume.sent_text else None
        if self.early is not None:
            stream, self.early = self.early.events(), None
        else:
            stream = tools.model.stream(self._request(), temperature=self.temperature)
        async with contextlib.aclosing(stream), contextlib.aclosing(self.pending.alongside(stream)) as events:
            async for event in events:
                if isinstance(event, ContextCurated | TurnNotice):
                    yield event  # the plan's view, or word that it failed
                elif isinstance(event, TextDelta):
                    text = event.text if answer_only is None else answer_only.feed(event.text)[1]
                    if not text:
                        continue
                    self.arrived.append(text)
                    yield ReplyTextArrived(text)
                    if tools.clock() - self.last_flush >= tools.flush_interval:
                        await tools.io(tools.steps.flush, self.reply.id, self._text())
                        self.last_flush = tools.clock()
                elif isinstance(event, UsageReport):
                    self.usage = event
                elif isinstance(event, ReplyFinished):
                    return
        raise ModelError(ModelErrorKind.CUT, "The reply ended before the model said it had finished.")

    async def _after_failure(self, err: ModelError) -> AsyncGenerator[TurnEvent, None]:
        """Wait and ask again, or budget for less and ask again; else ``err`` ends the reply. Part
        of the reply on screen always ends it: the user decides (continue or retry)."""
        tools = self.tools
        if self.arrived:
            raise err
        delay = tools.retry_policy.delay(err, self.retries + 1)
        if delay is not None:
            self.retries += 1
            yield RetryScheduled(err, delay, self.retries, tools.retry_policy.retries)
            if (planned_view := await self.pending.now()) is not None:
                yield planned_view
            await tools.sleep(delay)
            return
        if err.kind is not ModelErrorKind.CONTEXT_LENGTH or self.tightened:
            raise err
        # Once: budget for less and send again; the user is told what was left out.
        self.tightened = True
        if (planned_view := await self.pending.now()) is not None:
            yield planned_view
        before, first = tools.windows.window(tools.model), await self.pending.view()
        tools.windows.narrow(tools.model, err)
        self.planned = await tools.io(tools.steps.curate, self.session_id)
        self.pending = tools.pending_view(self.session_id, self.planned, 0)
        if (planned_view := await self.pending.now()) is not None:
            yield planned_view
        tighter = await self.pending.view()
        yield TurnNotice(tightened_notice(tools.model.name, err, before, first, tighter))

    # --- however it ends ----------------------------------------------------------------------

    async def _failed(self, err: ModelError) -> AsyncGenerator[TurnEvent, None]:
        failed = await self.tools.io(
            self.tools.steps.fail,
            self.session_id,
            self.reply.id,
            self._text(),
            err.user_message,
            resumed=self.resume is not None,
        )
        if (planned_view := await self.pending.rest()) is not None:
            yield planned_view
        yield ReplyFailed(failed, err)

    def _stopped(self) -> None:
        """Stopped by the user (the worker was cancelled) or the consumer went away. Saved
        synchronously: awaiting anything here could be cancelled again and lose the text."""
        self.pending.cancel()
        if self.early is not None:
            self.early.discard()
        self.tools.steps.finish_failed(self.reply.id, self._text(), self.tools.stop_reason())
        # Not analysed here (that could take a while): the curation is rebuilt on next use.
        self.tools.steps.evict(self.session_id)

    async def _unplanned(self, err: Exception) -> None:
        """A bug, or a write that failed: the reply still ends with what arrived, and the error
        goes on to be reported."""
        self.pending.cancel()
        if self.early is not None:
            self.early.discard()
        await self.tools.io(
            self.tools.steps.give_up, self.session_id, self.reply.id, self._text(), unplanned(err)
        )

    # --- helpers ------------------------------------------------------------------------------

    def _request(self) -> list[PromptMessage]:
        prompt = self.planned.prompt
        return continuation(prompt, self.prefix) if self.resume is not None else prompt

    def _text(self) -> str:
        return self.prefix + "".join(self.arrived)

    def _take_saved(self) -> UserMessageSaved:
        saved, self.saved = self.saved, None
        assert saved is not None
        return saved
