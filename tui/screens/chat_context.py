"""The user's hand on the context from the chat screen: pin, restore, forget, inspect, the ledger
and the consent dialog. The engine decides (engine/curation/context_service.py); the panel shows
the result."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from tui import heap
from tui.messages import ItemVerb
from tui.screens.chat_host import USAGE_GROUP
from tui.screens.chat_parts import ChatPart
from tui.screens.chat_pins import PinActions

if TYPE_CHECKING:
    from textual.timer import Timer

    from engine.curation.consent import ConsentChoice
    from engine.curation.context_view import ContextView
    from engine.curation.ledger import LedgerEntry
    from tui.screens.chat_host import ChatHost
    from tui.screens.consent import ConsentAnswer

BUILD_POLL = 0.3
"""How often, while a long session's curation is still being read, the panel checks how far it got."""


class ContextActions(ChatPart):
    def __init__(self, host: ChatHost) -> None:
        super().__init__(host)
        self.asked: set[int] = set()
        """Messages the consent dialog has asked about: a send raises it again only for new ones."""

    _build_timer: Timer | None = None
    _build_heap: contextlib.ExitStack | None = None
    """Full collections held off while a curation is read in the background (see tui/heap.py)."""

    def follow_build(self, view: ContextView) -> None:
        """While the session's curation is still being read, show the next request planned anew
        whenever more of it is ready (the panel says how much), until all of it is."""
        if view.building is None:
            self._built()
            return
        if self._build_heap is None:
            self._build_heap = contextlib.ExitStack()
            self._build_heap.enter_context(heap.loading())
        if self._build_timer is None:
            self._build_timer = self.host.set_timer(BUILD_POLL, self._check_build)

    def _built(self) -> None:
        """The curation is whole (or another session shown): it lives until the next switch."""
        if self._build_heap is not None:
            self._build_heap.close()
            self._build_heap = None
            heap.settle()

    def _check_build(self) -> None:
        self._build_timer = None
        host = self.host
        shown = host.context.building if host.context is not None else None
        if shown is None or host.session is None:
            self._built()
            return
        if host.services.turns.building(host.session.id) == shown or not host.settled:
            self._build_timer = host.set_timer(BUILD_POLL, self._check_build)
            return
        host.run_worker(host.refresh_usage, group=USAGE_GROUP, exclusive=True, exit_on_error=False)

    def run(self, action: ItemVerb, item_id: int) -> None:
        self.background(self._run(action, item_id))

    async def _run(self, action: ItemVerb, item_id: int) -> None:
        """Pin, restore, forget or inspect a message; the engine decides, the panel shows the result."""
        from engine.curation.session_curation import CurationRefused

        if self.host.session is None or self.host.context is None:
            return
        if self.host.busy:
            self.host.notify("A reply is still streaming; try again when it is done.", severity="warning")
            return
        context = self.host.services.context
        session_id = self.host.session.id
        if self._uncurated(item_id):
            return
        if action is ItemVerb.INSPECT:
            detail = await context.inspect(session_id, item_id)

            def chosen(follow_up: ItemVerb | None) -> None:
                if follow_up is not None:
                    self.run(follow_up, item_id)

            from tui.screens.inspect import InspectScreen  # a dialog: not for the first frame

            await self.host.app.push_screen(InspectScreen(detail), chosen)
            return
        current = self.host.context.item(item_id)
        try:
            if action is ItemVerb.PIN:
                if not (current is not None and current.pinned):
                    await PinActions(self.host).pin(session_id, item_id)  # within the pin limits
                    return
                view = await context.pin(session_id, item_id, pinned=False)
                said = f"Unpinned #{item_id}."
            elif action is ItemVerb.RESTORE:
                view = await context.restore(session_id, item_id)
                restored = view.item(item_id)
                said = (
                    f"Restored #{item_id}: it is sent verbatim again."
                    if restored is not None and restored.in_prompt
                    else f"Restored #{item_id}, but the next request has no room for it: pin it to send it."
                )
            else:
                view = await context.forget(session_id, item_id)
                said = f"Forgot #{item_id}. It stays in the store; Alt+R restores it."
        except CurationRefused as refused:
            self.host.notify(str(refused), severity="warning")
            return
        self.host.show_context(view)
        self.host.notify(said)

    def _uncurated(self, item_id: int) -> bool:
        """True, and the user told why, if the message is older than the part of a long session
        that is curated: the engine knows nothing about it, so it can be neither pinned nor inspected."""
        from engine.curation.session_curations import CURATED_LIMIT

        context = self.host.context
        if context is None or item_id > context.uncurated_through:
            return False
        if any(item.id == item_id for item in context.items):
            return False  # pinned before the session grew this long: curated whatever its age
        if context.building is not None:
            self.host.notify(
                f"#{item_id} is not curated yet: the session's messages are still being read, the "
                "latest first. Try again in a moment.",
                severity="warning",
            )
            return True
        self.host.notify(
            f"#{item_id} is older than the latest {CURATED_LIMIT:,} messages, the ones curated in a session "
            "this long: it stays in the store, is sent only when a message names what it holds, and is "
            "not pinned or inspected.",
            severity="warning",
        )
        return True

    def preview(self) -> None:
        from tui.screens.preview import PreviewScreen

        if self.host.context is None:
            self.host.notify("Still counting; try again in a moment.")
            return
        self.host.app.push_screen(PreviewScreen(self.host.context, exact=self.host.services.counter.exact))

    def ledger(self) -> None:
        self.background(self._ledger())

    async def _ledger(self) -> None:
        from tui.screens.ledger import LedgerScreen

        entries = await self._session_ledger(
            "Nothing has been decided yet: the ledger starts with the first message."
        )
        if entries is None:
            return

        def chosen(item_id: int | None) -> None:
            if item_id is not None:
                self.run(ItemVerb.RESTORE, item_id)

        await self.host.app.push_screen(LedgerScreen(entries, tokens_saved=self._tokens_saved()), chosen)

    def _tokens_saved(self) -> int:
        return self.host.context.session_saved_tokens if self.host.context else 0

    def stats(self) -> None:
        self.background(self._stats())

    async def _stats(self) -> None:
        from engine.curation.forgetting_stats import forgetting_stats
        from tui.screens.forgetting_stats import StatsScreen

        entries = await self._session_ledger(
            "Nothing has been forgotten yet: statistics start with the first message."
        )
        if entries is not None:
            await self.host.app.push_screen(StatsScreen(forgetting_stats(entries, self._tokens_saved())))

    async def _session_ledger(self, nothing_yet: str) -> list[LedgerEntry] | None:
        """The session's ledger; None, with ``nothing_yet`` said, before the session's first message."""
        if self.host.session is None:
            self.host.notify(nothing_yet)
            return None
        return await self.host.services.context.ledger(self.host.session.id)

    def consent(self) -> None:
        """F4: ask now about the user's messages, if Heedful has anything to ask."""
        if self.host.context is None or self.host.context.consent is None:
            self.host.notify("Heedful has nothing to ask about your messages right now.")
            return
        self._ask_consent(sent=None)

    def ask_on_send(self, text: str) -> None:
        """The user sent a message while Heedful has a question about older ones that it has not
        asked yet: ask it now, the moment they act (never after a reply lands, nor mid-typing)."""
        consent = self.host.context.consent if self.host.context else None
        if consent is not None and any(i.item_id not in self.asked for i in consent.items):
            self._ask_consent(sent=text)

    def _ask_consent(self, *, sent: str | None) -> None:
        from tui.screens.consent import ConsentScreen  # a dialog: not for the first frame

        consent = self.host.context.consent if self.host.context else None
        if consent is None or self.host.session is None:
            return
        if any(isinstance(open_, ConsentScreen) for open_ in self.host.app.screen_stack):
            return  # one question at a time: what is new is asked at the next send, or F4
        self.asked.update(i.item_id for i in consent.items)
        session_id = self.host.session.id

        def answered(answer: ConsentAnswer | None) -> None:
            if answer is not None:
                self.record_consent(session_id, answer)

        self.host.app.push_screen(ConsentScreen(consent, sent=sent), answered)

    def answer_sent(self, item_id: int, choice: ConsentChoice) -> None:
        """What the user chose as they sent a message larger than a request: keep it whole, or
        summarize it (room is short for it from the next request on). Recorded once it is sent."""
        from tui.screens.consent import ConsentAnswer

        if self.host.session is not None:
            self.record_consent(self.host.session.id, ConsentAnswer({item_id: choice}, None))

    def record_consent(self, session_id: int, answer: ConsentAnswer) -> None:
        if not answer.answers and answer.remember is None:
            self.host.notify("Your messages stay as they are; what does not fit is not sent. F4 answers.")
            return
        self.background(self._record_consent(session_id, answer))

    async def _record_consent(self, session_id: int, answer: ConsentAnswer) -> None:
        view = await self.host.services.context.answer_consent(
            session_id, answer.answers, remember=answer.remember
        )
        if self.host.session is not None and self.host.session.id == session_id:
            self.host.show_context(view)
        counts: dict[str, int] = {}
        for choice in answer.answers.values():
            counts[choice.value] = counts.get(choice.value, 0) + 1
        summary = ", ".join(f"{n} {choice}" for choice, n in counts.items())
        remembered = f"; from now on: {answer.remember.value}" if answer.remember else ""
        self.host.notify(f"Recorded your answer ({summary}){remembered}.")
