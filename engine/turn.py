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
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from engine.budget import DEFAULT_PROFILE, Profile
from engine.chat import MessageStatus, PromptMessage, Session, StoredMessage
from engine.errors import ModelError, ModelErrorKind
from engine.prompt import in_conversation, title_from
from engine.protocols import ChatModel, ChatStore, ReplyFinished, TextDelta, TokenCounter, UsageReport
from engine.session_curations import SessionCurations, last_user_item

if TYPE_CHECKING:
    # The curation engine is imported on first use, in a worker thread (see session_curations).
    from engine.context_view import ContextView

T = TypeVar("T")

STOPPED_BY_USER = "Stopped by you."


@dataclass(frozen=True, slots=True)
class UserMessageSaved:
    """The user's message is safely in the store (and the session exists)."""

    session: Session
    message: StoredMessage


@dataclass(frozen=True, slots=True)
class ContextCurated:
    """The engine decided what this request sends; ``view`` is what the context panel shows."""

    view: ContextView


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    """The request is on its way; ``message`` is the reply's (empty, streaming) row."""

    message: StoredMessage
    superseded: tuple[int, ...] = ()
    """Ids of earlier replies that a retry replaced."""


@dataclass(frozen=True, slots=True)
class ReplyTextArrived:
    text: str


@dataclass(frozen=True, slots=True)
class ReplyCompleted:
    message: StoredMessage
    usage: UsageReport | None


@dataclass(frozen=True, slots=True)
class ReplyFailed:
    """The request failed; ``message`` is the reply row as stored (failed, or interrupted with text)."""

    message: StoredMessage
    error: ModelError


TurnEvent = UserMessageSaved | ContextCurated | ReplyStarted | ReplyTextArrived | ReplyCompleted | ReplyFailed


class NothingToRetry(Exception):
    """Retry was asked for in a session with no user message."""


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.model = model
        self.counter = counter
        self._flush_interval = flush_interval
        self._clock = clock
        self.curations = SessionCurations(
            store,
            counter,
            window=lambda: self.model.context_window,
            system_prompt=system_prompt,
            profile=profile,
        )

    @property
    def system_prompt(self) -> str:
        return self.curations.system_prompt

    async def preview(self, session_id: int | None) -> ContextView:
        """What the context would look like if the last user message were sent now (changes nothing)."""
        return await self._io(self._preview, session_id)

    async def send(self, session_id: int | None, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Store ``text`` as the user's message (creating the session if needed), then reply to it."""
        session, message = await self._io(self._save_user_message, session_id, text)
        yield UserMessageSaved(session, message)
        async for event in self._reply(session.id, superseded=()):
            yield event

    async def retry(self, session_id: int) -> AsyncGenerator[TurnEvent, None]:
        """Answer the session's last user message again, superseding the replies it already has."""
        superseded = await self._io(self._supersede_last_replies, session_id)
        with self.curations.lock:
            self.curations.forget(session_id)  # the superseded replies leave the conversation
        async for event in self._reply(session_id, superseded=superseded):
            yield event

    # --- steps ---------------------------------------------------------------------------------

    def _save_user_message(self, session_id: int | None, text: str) -> tuple[Session, StoredMessage]:
        session = self.store.get_session(session_id) if session_id is not None else None
        if session is None:
            session = self.store.create_session(title_from(text))
        message = self.store.add_message(session.id, "user", text, tokens=self.counter.count(text))
        with self.curations.lock:
            curation = self.curations.cached(session.id)
            if curation is not None:
                curation.add_message(message.id, "user", text, message.tokens or 0)
        return self.store.get_session(session.id) or session, message

    def _supersede_last_replies(self, session_id: int) -> tuple[int, ...]:
        history = self.store.messages(session_id)
        last_user = max((i for i, m in enumerate(history) if m.role == "user"), default=None)
        if last_user is None:
            raise NothingToRetry(session_id)
        replaced = tuple(
            m.id for m in history[last_user + 1 :] if m.is_reply and m.status != MessageStatus.SUPERSEDED
        )
        for message_id in replaced:
            self.store.update_message(message_id, status=MessageStatus.SUPERSEDED)
        return replaced

    def _preview(self, session_id: int | None) -> ContextView:
        with self.curations.lock:
            return self.curations.preview(session_id)

    def _curate(self, session_id: int) -> tuple[ContextView, list[PromptMessage]]:
        """Plan this request, apply the plan and write it (states and ledger) in one transaction."""
        from engine.context_building import build_view
        from engine.curation_state import save

        with self.curations.lock:
            curation = self.curations.get(session_id)
            new = last_user_item(curation)
            if new is None:
                raise NothingToRetry(session_id)
            result = curation.plan(new, system_prompt=self.system_prompt)
            save(self.store, session_id, curation, curation.apply(result))
            prompt = [PromptMessage(m.role, m.content) for m in result.messages]
            return build_view(curation, result, new_id=new.id), prompt

    def _start_reply(self, session_id: int) -> StoredMessage:
        return self.store.add_message(
            session_id, "assistant", "", status=MessageStatus.STREAMING, model=self.model.name
        )

    def _remember_reply(self, session_id: int, reply: StoredMessage) -> None:
        with self.curations.lock:
            curation = self.curations.cached(session_id)
            if curation is not None and in_conversation(reply):
                curation.add_message(reply.id, "assistant", reply.content, reply.tokens or 0)

    async def _reply(
        self, session_id: int, *, superseded: tuple[int, ...]
    ) -> AsyncGenerator[TurnEvent, None]:
        view, prompt = await self._io(self._curate, session_id)
        yield ContextCurated(view)
        reply = await self._io(self._start_reply, session_id)
        parts: list[str] = []
        usage: UsageReport | None = None
        last_flush = self._clock()
        try:
            yield ReplyStarted(reply, superseded)
            async with contextlib.aclosing(self.model.stream(prompt)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        parts.append(event.text)
                        yield ReplyTextArrived(event.text)
                        if self._clock() - last_flush >= self._flush_interval:
                            await self._io(self.store.update_message, reply.id, content="".join(parts))
                            last_flush = self._clock()
                    elif isinstance(event, UsageReport):
                        usage = event
                    elif isinstance(event, ReplyFinished):
                        break
                else:
                    raise ModelError(
                        ModelErrorKind.CUT, "The reply ended before the model said it had finished."
                    )
        except ModelError as err:
            failed = await self._io(self._finish_failed, reply.id, "".join(parts), err.user_message)
            await self._io(self._remember_reply, session_id, failed)
            yield ReplyFailed(failed, err)
            return
        except (asyncio.CancelledError, GeneratorExit):
            # Stopped by the user (the worker was cancelled) or the consumer went away. Saved
            # synchronously: awaiting anything here could be cancelled again and lose the text.
            self._finish_failed(reply.id, "".join(parts), STOPPED_BY_USER)
            # Not analysed here (that could take a while): the curation is rebuilt on next use.
            with self.curations.lock:
                self.curations.forget(session_id)
            raise
        text = "".join(parts)
        done = await self._io(
            self.store.update_message,
            reply.id,
            content=text,
            status=MessageStatus.COMPLETE,
            tokens=self.counter.count(text),
        )
        await self._io(self._remember_reply, session_id, done)
        yield ReplyCompleted(done, usage)

    def _finish_failed(self, reply_id: int, text: str, reason: str) -> StoredMessage:
        status = MessageStatus.INTERRUPTED if text else MessageStatus.FAILED
        tokens = self.counter.count(text) if text else 0
        return self.store.update_message(reply_id, content=text, status=status, tokens=tokens, error=reason)

    async def _io(self, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)
