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
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from engine.chat import MessageStatus, PromptMessage, Session, StoredMessage
from engine.curation.budget import DEFAULT_PROFILE, Profile
from engine.curation.cold_store import ColdStore
from engine.curation.prompt import continuation, title_from
from engine.curation.result import CurationResult
from engine.curation.session_curations import SessionCurations, last_user_item
from engine.errors import ModelError, ModelErrorKind
from engine.protocols.memory import MemorySource
from engine.protocols.models import (
    NO_CURATION_MODELS,
    ChatModel,
    CurationModels,
    ReplyFinished,
    TextDelta,
    TokenCounter,
    UsageReport,
)
from engine.protocols.store import ChatStore
from engine.text.redaction import redact
from engine.text.terms import encodable
from engine.text.thinking import ThinkingSplitter, sent_text
from engine.turn.conversation_tail import NothingToRetry, cut_reply, since_last_user_message
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
    SessionReloaded,
    TurnEvent,
    TurnNotice,
    UserMessageSaved,
)
from engine.turn.model_windows import ModelWindows, tightened_notice
from engine.turn.pending_view import VIEW_DELAY, PendingView
from engine.turn.retrying import RetryPolicy

if TYPE_CHECKING:
    # The curation engine is imported on first use, in a worker thread (see session_curations).
    from engine.advice.advice import AdviceOutcome, CuratorBrief
    from engine.curation.context_view import ContextView
    from engine.summaries.service import SummaryService

T = TypeVar("T")

STOPPED_BY_USER = "Stopped by you."


def closed_by_signal(name: str) -> str:
    """What a reply cut off because Heedful was told to stop (SIGTERM, SIGHUP) says of it."""
    return f"Heedful was closed ({name}) before this reply finished."


QUIET_ADVICE = 0.1
"""Seconds the curator model may take before the user is shown that it is asked (and their message
is drawn): one that answers sooner leaves the drawing until the request is out, as when it is not
asked (drawn meanwhile, the message held up the plan on the same interpreter)."""


def unplanned(error: Exception) -> str:
    """What a reply ended by an error of Heedful's own says of it."""
    return redact(f"Stopped by an error in Heedful ({type(error).__name__}: {error}).")


@dataclass(frozen=True, slots=True)
class _Planned:
    """A request planned and applied: what it sends, and the plan for the UI's view of it."""

    result: CurationResult
    new_id: int
    prompt: list[PromptMessage]


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
        self._curation_models = curation_models
        self._helpers = NO_CURATION_MODELS
        self.stop_reason = STOPPED_BY_USER
        """What a reply cut off by cancelling its turn is marked with (the app being closed says so)."""
        self._summaries: SummaryService | None = None
        """Made on first use (it imports the curation engine)."""
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
        self.curations.model_summaries = helpers.summarizer is not None

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

    async def write_summaries(self, session_id: int) -> int:
        """Have the model write the summaries the session's last plans asked for (run it in the
        background after a turn: it never holds up typing or sending); how many were written."""
        summarizer = self._helpers.summarizer
        if summarizer is None:
            return 0
        if self._summaries is None:
            from engine.summaries.service import SummaryService

            self._summaries = SummaryService(self.curations)
        return await self._summaries.run(session_id, summarizer)

    async def preview(self, session_id: int | None) -> ContextView:
        """What the context would look like if the last user message were sent now (changes nothing)."""
        return await self._io(self._preview, session_id)

    async def send(self, session_id: int | None, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Store ``text`` as the user's message (creating the session if needed), then reply to it."""
        text = encodable(text)
        # The curator's brief is made in the same trip to a worker thread when nothing asked
        # before it can change it (the model's window is known): each trip waits for the loop.
        briefed = self._helpers.curator is not None and self.windows.asked(self.model)
        session, message, reloaded, brief = await self._io(self._save_user_message, session_id, text, briefed)
        if reloaded:
            yield SessionReloaded(session.id, before=message.id)
        saved = UserMessageSaved(session, message)
        async for event in self._reply(
            session.id, superseded=(), saved=saved, brief=(brief,) if briefed else None
        ):
            yield event

    async def resume(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        """Continue the session's last reply where it was cut off, in the same message.

        Raises:
            NothingToContinue: the last reply is whole, or there is none.
        """
        reloaded, cut = await self._io(self._cut_reply, session_id)
        if reloaded:
            yield SessionReloaded(session_id)
        async for event in self._reply(session_id, superseded=(), resume=cut):
            yield event

    async def retry(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        """Answer the session's last user message again, superseding the replies it already has."""
        reloaded, superseded = await self._io(self._supersede_last_replies, session_id)
        with self.curations.lock:
            self.curations.forget(session_id)  # the superseded replies leave the conversation
        if reloaded:
            yield SessionReloaded(session_id)
        async for event in self._reply(session_id, superseded=superseded):
            yield event

    # --- steps ---------------------------------------------------------------------------------

    def _catch_up(self, session_id: int) -> bool:
        """Whether another Heedful changed the session since this one last looked; if so, its
        curation is let go, to be rebuilt from the store (with the other's turns and edits)."""
        if not self.store.changed_elsewhere(session_id):
            return False
        with self.curations.lock:
            self.curations.forget(session_id)
        return True

    def _save_user_message(
        self, session_id: int | None, text: str, briefed: bool
    ) -> tuple[Session, StoredMessage, bool, CuratorBrief | None]:
        """The session (made for the first message), the message stored, whether the session
        had been changed by another Heedful (and is planned from the store again), and the
        curator's brief if ``briefed``."""
        session = self.store.get_session(session_id) if session_id is not None else None
        reloaded = session is not None and self._catch_up(session.id)
        if session is None:
            session = self.store.create_session(title_from(text))
        message = self.store.add_message(session.id, "user", text, tokens=self.counter.count(text))
        with self.curations.lock:
            self.curations.take(session.id, message)
        brief = self._brief(session.id) if briefed else None
        return self.store.get_session(session.id) or session, message, reloaded, brief

    def _supersede_last_replies(self, session_id: int) -> tuple[bool, tuple[int, ...]]:
        reloaded = self._catch_up(session_id)
        replaced = tuple(m.id for m in since_last_user_message(self.store, session_id) if m.is_reply)
        for message_id in replaced:
            self.store.update_message(message_id, status=MessageStatus.SUPERSEDED)
        return reloaded, replaced

    def _cut_reply(self, session_id: int) -> tuple[bool, StoredMessage]:
        reloaded = self._catch_up(session_id)
        return reloaded, cut_reply(self.store, session_id)

    def _preview(self, session_id: int | None) -> ContextView:
        with self.curations.lock:
            return self.curations.preview(session_id)

    def _curate(self, session_id: int, outcome: AdviceOutcome | None = None) -> _Planned:
        """Plan this request, apply the plan and write it (states and ledger) in one transaction.

        Args:
            outcome: The curator model's answer for this turn (None: this turn had no curator pass;
                a request planned again is planned with the advice it had).
        """
        with self.curations.lock:
            curation = self.curations.get(session_id)
            new = last_user_item(curation)
            if new is None:
                raise NothingToRetry(session_id)
            guidance = self.curations.judge(session_id, outcome, new.id) if outcome is not None else None
            if guidance is None:
                guidance = self.curations.guidance.get(session_id)
            result = curation.plan(
                new,
                system_prompt=self.curations.system_prompt_for(session_id),
                guidance=guidance,
                cold=self.curations.earlier_candidates(session_id, curation, new),
            )
            self.curations.save(session_id, curation, curation.apply(result))
            return _Planned(result, new.id, [PromptMessage(m.role, m.content) for m in result.messages])

    def _brief(self, session_id: int) -> CuratorBrief | None:
        with self.curations.lock:
            return self.curations.brief(session_id)

    def _view(self, session_id: int, planned: _Planned) -> ContextView:
        """What the UI shows of a plan (not needed to send it: built while the request is out)."""
        from engine.curation.context_building import build_view

        with self.curations.lock:
            return build_view(
                self.curations.get(session_id),
                planned.result,
                new_id=planned.new_id,
                calls=self.curations.calls(session_id),
            )

    def _pending_view(self, session_id: int, planned: _Planned, delay: float) -> PendingView:
        """:meth:`_view` of ``planned``, begun in a worker thread after ``delay`` or when wanted."""
        return PendingView(functools.partial(self._io, self._view, session_id, planned), delay=delay)

    def _prepare(
        self, session_id: int, resume: StoredMessage | None, outcome: AdviceOutcome | None = None
    ) -> tuple[_Planned, float | None, StoredMessage]:
        """Everything the request needs, in one trip to a worker thread (each trip back to a busy
        event loop costs a wait): curate, read the temperature, and begin the reply (or reopen the
        cut one)."""
        planned = self._curate(session_id, outcome)
        with self.curations.lock:
            temperature = self.curations.settings(session_id).temperature
            self.curations.tally(session_id).close_turn()  # what curation spent for this request
        if resume is None:
            reply = self.store.add_message(
                session_id, "assistant", "", status=MessageStatus.STREAMING, model=self.model.name
            )
        else:
            reply = self.store.update_message(resume.id, status=MessageStatus.STREAMING)
        return planned, temperature, reply

    def _complete(self, session_id: int, reply_id: int, text: str, resumed: bool) -> StoredMessage:
        """Store the whole reply and add it to the session's curation, in one trip to the
        worker thread: each trip waits for the event loop, busy drawing the reply's last words."""
        done = self.store.update_message(
            reply_id,
            content=text,
            status=MessageStatus.COMPLETE,
            tokens=self.counter.count(sent_text("assistant", text)),
            error="",  # a continued reply is whole now: its old "cut off" no longer applies
        )
        self._remember_reply(session_id, done, resumed=resumed)
        return done

    def _remember_reply(self, session_id: int, reply: StoredMessage, *, resumed: bool = False) -> None:
        with self.curations.lock:
            if resumed:
                # The reply's text grew after it was analysed: rebuilt from the store on next use.
                self.curations.forget(session_id)
                return
            self.curations.take(session_id, reply)

    async def _reply(
        self,
        session_id: int,
        *,
        superseded: tuple[int, ...],
        resume: StoredMessage | None = None,
        saved: UserMessageSaved | None = None,
        brief: tuple[CuratorBrief | None] | None = None,
    ) -> AsyncGenerator[TurnEvent, None]:
        """Plan, send and stream one reply.

        Args:
            saved: The user's message just stored. It is reported once the request is on its way
                (drawing it would otherwise hold up planning, on the same interpreter), or
                before anything that may keep the request waiting: the server asked for its
                window, the curator model slower than :data:`QUIET_ADVICE`.
            brief: The curator's brief, made already (None: made here, if there is a curator).
        """
        if not self.windows.asked(self.model) and saved is not None:
            yield saved
            saved = None
        notice = await self.windows.learn(self.model)
        if notice is not None:
            yield notice
        # A continued reply goes on with the plan it had; a new request may be advised first
        # (not when there is no curator, or the conversation fits the budget whole).
        outcome: AdviceOutcome | None = None
        curator = self._helpers.curator
        if curator is not None and resume is None:
            made = brief[0] if brief is not None else await self._io(self._brief, session_id)
            if made is not None and curator.resting:
                outcome = await curator.advise(made)  # at once: no advice, and why
            elif made is not None:
                advising = asyncio.ensure_future(curator.advise(made))
                try:
                    if not (await asyncio.wait({advising}, timeout=QUIET_ADVICE))[0]:
                        if saved is not None:
                            yield saved
                            saved = None
                        yield CuratorAsked(curator.model, curator.timeout)
                    outcome = await advising
                finally:
                    advising.cancel()  # a stop meanwhile ends the pass too (done: nothing to cancel)
        try:
            planned, temperature, reply = await self._io(self._prepare, session_id, resume, outcome)
        except Exception:
            if saved is not None:
                yield saved  # stored all the same: the user must see it (and not send it twice)
            raise
        prompt = planned.prompt
        prefix = resume.content if resume is not None else ""
        arrived: list[str] = []
        usage: UsageReport | None = None
        last_flush = self._clock()
        retries = 0
        tightened = False
        request = continuation(prompt, prefix) if resume is not None else prompt
        # Sent now: the server works while the UI draws the context and the reply's place.
        early: EarlyStream | None = EarlyStream(self.model.stream(request, temperature=temperature))
        pending = self._pending_view(session_id, planned, self._view_delay)
        try:
            # Inside the try: a stop meanwhile still closes the reply just begun.
            if saved is not None:
                yield saved
            # The reply's place right after the message: the screen lays both out at once.
            yield ReplyStarted(reply, superseded) if resume is None else ReplyResumed(reply)
            while True:
                request = continuation(prompt, prefix) if resume is not None else prompt
                # A reasoning model thinks again before it goes on: only the rest of its answer is added.
                answer_only = ThinkingSplitter() if resume is not None and resume.sent_text else None
                try:
                    if early is not None:
                        stream, early = early.events(), None
                    else:
                        stream = self.model.stream(request, temperature=temperature)
                    async with (
                        contextlib.aclosing(stream),
                        contextlib.aclosing(pending.alongside(stream)) as events,
                    ):
                        async for event in events:
                            if isinstance(event, ContextCurated | TurnNotice):
                                yield event  # the plan's view, or word that it failed
                            elif isinstance(event, TextDelta):
                                text = event.text if answer_only is None else answer_only.feed(event.text)[1]
                                if not text:
                                    continue
                                arrived.append(text)
                                yield ReplyTextArrived(text)
                                if self._clock() - last_flush >= self._flush_interval:
                                    text = prefix + "".join(arrived)
                                    await self._io(self.store.update_message, reply.id, content=text)
                                    last_flush = self._clock()
                            elif isinstance(event, UsageReport):
                                usage = event
                            elif isinstance(event, ReplyFinished):
                                break
                        else:
                            raise ModelError(
                                ModelErrorKind.CUT, "The reply ended before the model said it had finished."
                            )
                    break
                except ModelError as err:
                    if arrived:
                        raise  # part of the reply is on screen: the user decides (continue or retry)
                    delay = self.retry_policy.delay(err, retries + 1)
                    if delay is not None:
                        retries += 1
                        yield RetryScheduled(err, delay, retries, self.retry_policy.retries)
                        if (planned_view := await pending.now()) is not None:
                            yield planned_view
                        await self._sleep(delay)
                        continue
                    if err.kind is not ModelErrorKind.CONTEXT_LENGTH or tightened:
                        raise
                    # Once: budget for less and send again; the user is told what was left out.
                    tightened = True
                    if (planned_view := await pending.now()) is not None:
                        yield planned_view
                    before, first = self.window, await pending.view()
                    self.windows.narrow(self.model, err)
                    planned = await self._io(self._curate, session_id)
                    prompt = planned.prompt
                    pending = self._pending_view(session_id, planned, 0)
                    if (planned_view := await pending.now()) is not None:
                        yield planned_view
                    tighter = await pending.view()
                    yield TurnNotice(tightened_notice(self.model.name, err, before, first, tighter))
        except ModelError as err:
            failed = await self._io(
                self._finish_failed, reply.id, prefix + "".join(arrived), err.user_message
            )
            await self._io(self._remember_reply, session_id, failed, resumed=resume is not None)
            if (planned_view := await pending.rest()) is not None:
                yield planned_view
            yield ReplyFailed(failed, err)
            return
        except (asyncio.CancelledError, GeneratorExit):
            pending.cancel()
            # Stopped by the user (the worker was cancelled) or the consumer went away. Saved
            # synchronously: awaiting anything here could be cancelled again and lose the text.
            if early is not None:
                early.discard()
            self._finish_failed(reply.id, prefix + "".join(arrived), self.stop_reason)
            # Not analysed here (that could take a while): the curation is rebuilt on next use.
            with self.curations.lock:
                self.curations.forget(session_id)
            raise
        except Exception as err:
            # Unplanned (a bug, a write that failed): the reply still ends with what arrived, and
            # the error goes on to be reported.
            pending.cancel()
            if early is not None:
                early.discard()
            await self._io(self._give_up, session_id, reply.id, prefix + "".join(arrived), unplanned(err))
            raise
        done = await self._io(
            self._complete, session_id, reply.id, prefix + "".join(arrived), resume is not None
        )
        if (planned_view := await pending.rest()) is not None:
            yield planned_view  # begun before the reply was whole; the outcome stays last
        yield ReplyCompleted(done, usage)

    def _give_up(self, session_id: int, reply_id: int, text: str, reason: str) -> None:
        """After an unplanned error: end the reply with what arrived (unless the store is what
        failed) and have the session's curation rebuilt on next use. In a worker thread: a view
        still being built holds the curation's lock."""
        with contextlib.suppress(Exception):
            self._finish_failed(reply_id, text, reason)
        with self.curations.lock:
            self.curations.forget(session_id)

    def _finish_failed(self, reply_id: int, text: str, reason: str) -> StoredMessage:
        status = MessageStatus.INTERRUPTED if text else MessageStatus.FAILED
        tokens = self.counter.count(sent_text("assistant", text)) if text else 0
        return self.store.update_message(reply_id, content=text, status=status, tokens=tokens, error=reason)

    async def _io(self, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)
