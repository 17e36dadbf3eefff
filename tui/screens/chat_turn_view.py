"""Showing a turn as it happens: the user's message, the context, the reply as it streams, retries
and failures, and what is left on screen when the user stops it or something fails under it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from engine.chat import MessagePage, MessageStatus
from engine.errors import StoreError
from engine.turn.conversation_tail import NothingToContinue, NothingToRetry
from tui import heap
from tui.screens.chat_host import SUMMARY_GROUP, USAGE_GROUP
from tui.screens.chat_parts import ChatPart
from tui.screens.chat_wording import failure_notice, wait_reason
from tui.widgets.message_list import PAGE
from tui.widgets.message_view import MessageView

if TYPE_CHECKING:  # a turn's events are imported where they are used: the first frame waits for no turn
    from engine.turn.events import SessionReloaded, TurnEvent, UserMessageSaved
    from tui.screens.chat_draft import DraftHints
    from tui.screens.chat_host import ChatHost

SESSION_RELOADED = "This session changed in another window: reloaded."


class TurnView(ChatPart):
    """Runs a turn the screen started and shows it; the draft hint is cleared once it is sent."""

    def __init__(self, host: ChatHost, *, draft: DraftHints) -> None:
        super().__init__(host)
        self.draft = draft

    reply: MessageView | None = None
    """The reply that is streaming, so a stop can show what the store kept of it."""
    _shown = False
    """The user's message of the turn is drawn."""
    sent_id: int | None = None
    """The id of the user's message the last turn stored."""

    async def start(
        self, text: str | None, *, resume: bool, branch_from: int | None
    ) -> AsyncGenerator[TurnEvent, None] | None:
        """The events of the turn that sends ``text`` (None: retries the last turn, or continues
        its cut-off reply with ``resume``; ``branch_from``: the edited message it replaces, with
        what followed); None, and the user told why, when there is no turn to run."""
        turns = self.host.services.turns
        session_id = self.host.session.id if self.host.session else None
        if text is None:
            if session_id is None:
                self.host.notify("Nothing to retry yet.")
                return None
            return turns.resume(session_id) if resume else turns.retry(session_id)
        if branch_from is not None and session_id is not None:
            from engine.turn.conversation_edits import NotEditable  # after the first frame

            try:
                gone = await turns.edits().branch_at(session_id, branch_from)
            except NotEditable as refused:
                self.host.notify(str(refused), severity="warning")
                return None
            await self.host.message_list.drop(gone.ids)
        return turns.send(session_id, text)

    async def show(self, events: AsyncGenerator[TurnEvent, None], *, sending: str | None = None) -> None:
        """Show a turn's events until it ends (``sending``: the text of the message it sends).

        Raises:
            asyncio.CancelledError: The user stopped it (the reply keeps what arrived).
            StoreError: The store failed under it (the reply is marked interrupted).
            Exception: Anything unplanned (the reply shows what the store kept of it).
        """
        host = self.host
        self.reply = None
        self._shown = False
        self.sent_id = None
        try:
            async with contextlib.aclosing(events) as stream:
                await self._follow(stream)
        except asyncio.CancelledError:
            if self.reply is not None:
                await self._settle(self.reply)
            elif sending is not None and not self._shown:
                await self._show_stopped_message(sending)
            host.notify("Stopped. The partial reply is kept; Ctrl+R asks again.")
            raise
        except StoreError as err:
            # The store failed under a streaming reply: what is on screen may not be saved.
            if self.reply is not None:
                await self.reply.close_stream()
                self.reply.update_message(
                    replace(self.reply.message, status=MessageStatus.INTERRUPTED, error=err.user_message)
                )
            raise
        except NothingToRetry:
            host.notify("Nothing to retry yet.")
        except NothingToContinue:
            host.notify("The last reply was not cut off: there is nothing to continue. Ctrl+R asks again.")
        except Exception:
            # Unplanned (a bug): the engine ended the reply with what arrived; the app reports the
            # error, and the reply shows what the store kept, not a cursor still waiting.
            if self.reply is not None:
                await self._settle(self.reply)
            raise
        finally:
            self.reply = None

    async def _follow(self, events: AsyncIterator[TurnEvent]) -> None:
        from engine.turn import events as turn  # after the first frame

        host = self.host
        messages = host.message_list
        async for event in events:
            view = self.reply
            if isinstance(event, turn.UserMessageSaved):
                await self._show_message(event)
            elif isinstance(event, turn.SessionReloaded):
                await self._reload(event)
            elif isinstance(event, turn.CuratorAsked):
                host.context_panel.show_curating(event.model, event.timeout)
            elif isinstance(event, turn.ContextCurated):
                host.show_context(event.view)
            elif isinstance(event, turn.ReplyStarted):
                await messages.drop(event.superseded)
                self.reply = await messages.add(event.message)
            elif isinstance(event, turn.ReplyResumed):
                resumed = messages.view_for(event.message.id) or await messages.add(event.message)
                resumed.update_message(event.message)
                self.reply = resumed
            elif isinstance(event, turn.RetryScheduled) and view is not None:
                what = wait_reason(event.error.kind)
                view.show_wait(f"{what} (retry {event.retry} of {event.retries})", event.delay)
            elif isinstance(event, turn.TurnNotice):
                host.notify(event.text, title="Context", severity="warning", timeout=15)
            elif isinstance(event, turn.ReplyTextArrived) and view is not None:
                await view.write(event.text)
            elif isinstance(event, turn.ReplyCompleted) and view is not None:
                await view.close_stream()
                view.update_message(event.message)
            elif isinstance(event, turn.ReplyFailed) and view is not None:
                await view.close_stream()
                view.update_message(event.message)
                title, text = failure_notice(event.error, kept=bool(event.message.content))
                host.notify(text, title=title, severity="error", timeout=12)

    def after(self) -> None:
        """After a turn, in the background (the user may send the next message meanwhile): show
        what the next request would send, and have the model write the summaries the plan asked for."""
        host = self.host
        # The work as callables, not coroutines: a worker cancelled before it starts (the next
        # turn's, or the app closing) leaves no coroutine never awaited.
        host.run_worker(self._plan_next, group=USAGE_GROUP, exclusive=True, exit_on_error=False)
        if host.session is not None:
            write = partial(self._write_summaries, host.session.id)
            host.run_worker(write, group=SUMMARY_GROUP, exit_on_error=False)

    async def _plan_next(self) -> None:
        """Show what the next request would send (never asking: that waits for the user to act)."""
        await self.host.refresh_usage()
        await asyncio.to_thread(self.host.services.store.checkpoint)
        heap.release()  # what the turn and its preview planning freed

    async def _write_summaries(self, session_id: int) -> None:
        """Have the model write the summaries the last plan asked for (while a run is under way,
        it takes them and this one ends at once); then the panel shows them, unless a turn is under way."""
        host = self.host
        written = await host.services.turns.write_summaries(session_id)
        if written and not host.busy and host.session is not None and host.session.id == session_id:
            await host.refresh_usage()

    async def _reload(self, event: SessionReloaded) -> None:
        """Another Heedful changed the session: show its latest messages as the store has them (up
        to the one this turn sends, drawn when it is reported), and say why the chat changed."""
        host = self.host
        page = await asyncio.to_thread(
            host.services.store.message_page, event.session_id, before=event.before, limit=PAGE
        )
        await host.message_list.show(MessagePage(page.messages, page.earlier, 0))
        host.notify(SESSION_RELOADED, severity="warning")

    async def _show_message(self, event: UserMessageSaved) -> None:
        host = self.host
        host.adopt_session(event.session)
        host.composer.sent()
        self.draft.show("")
        self.sent_id = event.message.id
        await host.message_list.add(event.message)
        self._shown = True

    async def _show_stopped_message(self, text: str) -> None:
        """Stopped before the user's message was drawn (it is drawn once the request is out, or
        the curator model is slow): it is stored all the same, so it is shown, and the composer
        no longer offers it to be sent twice. (A new chat's, whose session is not known here,
        stays in the composer.)"""
        from engine.turn.events import UserMessageSaved

        session = self.host.session
        if session is None:
            return
        page = await asyncio.to_thread(self.host.services.store.message_page, session.id, limit=1)
        last = page.messages[-1] if page.messages else None
        shown = last is not None and self.host.message_list.view_for(last.id) is not None
        if last is not None and last.role == "user" and last.content == text and not shown:
            await self._show_message(UserMessageSaved(session, last))

    async def _settle(self, view: MessageView) -> None:
        """After a stop or an unplanned error: show the reply as the store now has it (ended,
        text kept)."""
        await view.close_stream()
        message = view.message
        page = await asyncio.to_thread(
            self.host.services.store.message_page, message.session_id, before=message.id + 1, limit=1
        )
        current = next((m for m in page.messages if m.id == message.id), None)
        if current is not None:
            view.update_message(current)
