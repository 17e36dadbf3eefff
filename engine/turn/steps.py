"""The steps of a turn that read and write the store and the session's curation, each run in one
trip to a worker thread (a trip back to a busy event loop waits): :class:`TurnSteps`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.chat import MessageStatus, PromptMessage, Session, StoredMessage
from engine.curation.prompt import title_from
from engine.curation.result import CurationResult
from engine.curation.session_curations import SessionCurations
from engine.protocols.models import TokenCounter
from engine.protocols.store import ChatStore
from engine.text.thinking import sent_text
from engine.turn.conversation_tail import NothingToRetry, cut_reply, since_last_user_message

if TYPE_CHECKING:
    from engine.advice.advice import AdviceOutcome, CuratorBrief
    from engine.curation.context_view import ContextView


@dataclass(frozen=True, slots=True)
class Planned:
    """A request planned and applied: what it sends, and the plan for the UI's view of it."""

    result: CurationResult
    new_id: int
    prompt: list[PromptMessage]


class TurnSteps:
    """What a turn does to the store and the curation: blocking, so the turn runs each in a thread."""

    def __init__(
        self,
        store: ChatStore,
        counter: TokenCounter,
        curations: SessionCurations,
        model_name: Callable[[], str],
    ) -> None:
        self.store = store
        self.counter = counter
        self.curations = curations
        self._model_name = model_name

    def catch_up(self, session_id: int) -> bool:
        """Whether another Heedful changed the session since this one last looked; if so, its
        curation is let go, to be rebuilt from the store (with the other's turns and edits)."""
        if not self.store.changed_elsewhere(session_id):
            return False
        self.curations.evict(session_id)
        return True

    def save_user_message(
        self, session_id: int | None, text: str, briefed: bool
    ) -> tuple[Session, StoredMessage, bool, CuratorBrief | None]:
        """The session (made for the first message), the message stored, whether the session
        had been changed by another Heedful (and is planned from the store again), and the
        curator's brief if ``briefed``."""
        session = self.store.get_session(session_id) if session_id is not None else None
        reloaded = session is not None and self.catch_up(session.id)
        if session is None:
            session = self.store.create_session(title_from(text))
        message = self.store.add_message(session.id, "user", text, tokens=self.counter.count(text))
        self.curations.take(session.id, message)
        brief = self.brief(session.id) if briefed else None
        return self.store.get_session(session.id) or session, message, reloaded, brief

    def supersede_last_replies(self, session_id: int) -> tuple[bool, tuple[int, ...]]:
        reloaded = self.catch_up(session_id)
        replaced = tuple(m.id for m in since_last_user_message(self.store, session_id) if m.is_reply)
        for message_id in replaced:
            self.store.update_message(message_id, status=MessageStatus.SUPERSEDED)
        return reloaded, replaced

    def cut_reply(self, session_id: int) -> tuple[bool, StoredMessage]:
        reloaded = self.catch_up(session_id)
        return reloaded, cut_reply(self.store, session_id)

    def preview(self, session_id: int | None) -> ContextView:
        return self.curations.preview(session_id)

    def curate(self, session_id: int, outcome: AdviceOutcome | None = None) -> Planned:
        """Plan this request, apply the plan and write it (states and ledger) in one transaction.

        Args:
            outcome: The curator model's answer for this turn (None: this turn had no curator pass;
                a request planned again is planned with the advice it had).
        """
        with self.curations.held(session_id) as held:
            curation = held.curation
            new = curation.last_user()
            if new is None:
                raise NothingToRetry(session_id)
            guidance = held.judge(outcome, new.id) if outcome is not None else None
            if guidance is None:
                guidance = held.guidance
            result = curation.plan(
                new,
                system_prompt=held.system_prompt,
                guidance=guidance,
                cold=held.earlier_candidates(new),
            )
            held.save(curation.apply(result))
            return Planned(result, new.id, [PromptMessage(m.role, m.content) for m in result.messages])

    def dense_notice(self) -> str | None:
        """What to tell the user, once, of the embedder failing (None: nothing new)."""
        meaning = self.curations.meaning
        reason = meaning.trouble.take() if meaning is not None else None
        if reason is None:
            return None
        return (
            f"Recall by meaning is paused: the embeddings endpoint failed ({reason.rstrip('.')}). "
            "Older messages are recalled by their words alone until it answers again."
        )

    def brief(self, session_id: int) -> CuratorBrief | None:
        return self.curations.brief(session_id)

    def view(self, session_id: int, planned: Planned) -> ContextView:
        """What the UI shows of a plan (not needed to send it: built while the request is out)."""
        from engine.curation.context_building import build_view

        with self.curations.held(session_id) as held:
            return build_view(held.curation, planned.result, new_id=planned.new_id, calls=held.calls())

    def prepare(
        self, session_id: int, resume: StoredMessage | None, outcome: AdviceOutcome | None = None
    ) -> tuple[Planned, float | None, StoredMessage]:
        """Everything the request needs, in one trip: curate, read the temperature, and begin the
        reply (or reopen the cut one)."""
        planned = self.curate(session_id, outcome)
        with self.curations.held(session_id) as held:
            temperature = held.settings.temperature
            held.tally.close_turn()  # what curation spent for this request
        if resume is None:
            reply = self.store.add_message(
                session_id, "assistant", "", status=MessageStatus.STREAMING, model=self._model_name()
            )
        else:
            reply = self.store.update_message(resume.id, status=MessageStatus.STREAMING)
        return planned, temperature, reply

    def flush(self, reply_id: int, text: str) -> None:
        """Save the text of a reply still streaming."""
        self.store.update_message(reply_id, content=text)

    def complete(self, session_id: int, reply_id: int, text: str, resumed: bool) -> StoredMessage:
        """Store the whole reply and add it to the session's curation, in one trip (the event
        loop is busy drawing the reply's last words)."""
        done = self.store.update_message(
            reply_id,
            content=text,
            status=MessageStatus.COMPLETE,
            tokens=self.counter.count(sent_text("assistant", text)),
            error="",  # a continued reply is whole now: its old "cut off" no longer applies
        )
        self.remember_reply(session_id, done, resumed=resumed)
        return done

    def remember_reply(self, session_id: int, reply: StoredMessage, *, resumed: bool = False) -> None:
        if resumed:
            # The reply's text grew after it was analysed: rebuilt from the store on next use.
            self.curations.evict(session_id)
        else:
            self.curations.take(session_id, reply)

    def fail(self, session_id: int, reply_id: int, text: str, reason: str, *, resumed: bool) -> StoredMessage:
        """End a reply that failed with what arrived, and keep it in the session's curation."""
        failed = self.finish_failed(reply_id, text, reason)
        self.remember_reply(session_id, failed, resumed=resumed)
        return failed

    def give_up(self, session_id: int, reply_id: int, text: str, reason: str) -> None:
        """After an unplanned error: end the reply with what arrived (unless the store is what
        failed) and have the session's curation rebuilt on next use. In a worker thread: a view
        still being built holds the curation's lock."""
        with contextlib.suppress(Exception):
            self.finish_failed(reply_id, text, reason)
        self.evict(session_id)

    def evict(self, session_id: int) -> None:
        """Let the session's curation go: it is rebuilt from the store on next use."""
        self.curations.evict(session_id)

    def finish_failed(self, reply_id: int, text: str, reason: str) -> StoredMessage:
        status = MessageStatus.INTERRUPTED if text else MessageStatus.FAILED
        tokens = self.counter.count(sent_text("assistant", text)) if text else 0
        return self.store.update_message(reply_id, content=text, status=status, tokens=tokens, error=reason)
