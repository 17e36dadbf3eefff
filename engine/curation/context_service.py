"""The user's own hand on the context: pin, restore, forget, answer consent, inspect, preview a draft.

A UI-free service like :class:`engine.turn.service.TurnService`, sharing its :class:`SessionCurations`.
Every change is planned by the engine, written to the store with its ledger entries in one
transaction, and answered with the context as it now stands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

from engine.chat import Session, SessionSettings
from engine.curation.consent import ConsentChoice, ConsentRequest
from engine.curation.ledger import LedgerEntry
from engine.curation.session_curations import SessionCurations

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView, ItemDetail
    from engine.curation.keep_rules import KeepRule
    from engine.curation.pins import PinVerdict
    from engine.curation.result import CurationDelta
    from engine.curation.session_curation import SessionCuration
    from engine.standing.book import Standing

T = TypeVar("T")

DRAFT_ID = -1
"""The id a draft is planned under: stored messages have positive ids."""
DRAFT_CHARS = 20_000
"""Only the start of a long draft is analysed for its preview: enough to say what it recalls."""


class ContextService:
    def __init__(self, curations: SessionCurations) -> None:
        self.curations = curations
        self.store = curations.store

    async def attach(self, session_id: int | None, name: str, text: str) -> tuple[Session, ContextView]:
        """Add an attachment's text (see engine/turn/attachments.py) as a tool item of the session,
        creating the session if there is none yet; the context as it now stands."""

        def work() -> tuple[Session, ContextView]:
            store = self.store
            session = store.get_session(session_id) if session_id is not None else None
            if session is None:
                session = store.create_session(f"Attached {name}"[:48])
            tokens = self.curations.counter.count(text)
            message = store.add_message(session.id, "tool", text, tokens=tokens)
            with self.curations.held(session.id) as held:
                held.take(message)
                return store.get_session(session.id) or session, held.preview()

        return await asyncio.to_thread(work)

    async def pin(
        self, session_id: int, item_id: int, *, pinned: bool = True, confirmed: bool = False
    ) -> ContextView:
        """Pin (always send verbatim) or unpin a message.

        Raises:
            PinRefused: The pin would take pins past the whole budget, or past the pin limit and
                ``confirmed`` is False (its verdict says which, with the numbers).
        """

        def pin(curation: SessionCuration) -> CurationDelta:
            from engine.curation.pins import PinOutcome
            from engine.curation.user_actions import PinRefused

            if pinned:
                verdict = curation.pin_verdict(item_id)
                if verdict.outcome is PinOutcome.REFUSED or (
                    verdict.outcome is PinOutcome.CONFIRM and not confirmed
                ):
                    raise PinRefused(verdict)
            return curation.pin(item_id, pinned=pinned)

        return await self._change(session_id, pin)

    async def pin_verdict(self, session_id: int, item_id: int) -> PinVerdict:
        """What pinning a message would do to the budget, and whether it may happen."""

        def work() -> PinVerdict:
            with self.curations.held(session_id) as held:
                return held.curation.pin_verdict(item_id)

        return await asyncio.to_thread(work)

    async def restore(self, session_id: int, item_id: int) -> ContextView:
        """Make a pruned or summarized message verbatim again."""
        return await self._change(session_id, lambda c: c.restore(item_id))

    async def forget(self, session_id: int, item_id: int) -> ContextView:
        """Prune a message now (restorable).

        Raises:
            CurationRefused: It is pinned.
        """
        return await self._change(session_id, lambda c: c.forget(item_id))

    async def answer_consent(
        self,
        session_id: int,
        answers: Mapping[int, ConsentChoice],
        *,
        remember: ConsentChoice | None = None,
    ) -> ContextView:
        """Record the user's answers to a consent request (and "apply to all", if chosen)."""
        return await self._change(session_id, lambda c: c.answer_consent(answers, remember=remember))

    async def settings(self, session_id: int) -> tuple[SessionSettings, str]:
        """The session's own settings, and the system prompt it actually uses."""

        def work() -> tuple[SessionSettings, str]:
            with self.curations.held(session_id) as held:
                return held.settings, held.system_prompt

        return await asyncio.to_thread(work)

    async def update_settings(self, session_id: int, settings: SessionSettings) -> ContextView:
        """Give the session its own settings (None fields: the config's); the context under them."""

        def work() -> ContextView:
            with self.curations.held(session_id) as held:
                held.update_settings(settings)
                return held.preview()

        return await asyncio.to_thread(work)

    async def compact(self, session_id: int) -> tuple[ContextView, int, ConsentRequest | None]:
        """Summarize older turns now: the context after it, how many messages were summarized, and
        the consent request the user's own messages come back as."""

        def work() -> tuple[ContextView, int, ConsentRequest | None]:
            with self.curations.held(session_id) as held:
                delta, request = held.curation.compact()
                held.save(delta)
                return held.preview(), len(delta.items), request

        return await asyncio.to_thread(work)

    async def keep_rules(self, session_id: int) -> tuple[KeepRule, ...]:
        """The session's keep rules, oldest first."""

        def work() -> tuple[KeepRule, ...]:
            with self.curations.held(session_id) as held:
                return held.curation.keep_rules

        return await asyncio.to_thread(work)

    async def add_keep_rule(self, session_id: int, text: str) -> tuple[KeepRule, int, ContextView]:
        """Keep what matches ``text`` from now on (one ledger line, "by you"); the rule, how many
        messages it matches now, and the context under it."""

        def work() -> tuple[KeepRule, int, ContextView]:
            with self.curations.held(session_id) as held:
                curation = held.curation
                entry = LedgerEntry.keep_rule(curation.turn, text, added=True)
                rule = self.store.add_keep_rule(session_id, text, entry)
                curation.set_keep_rules([*curation.keep_rules, rule])
                return rule, curation.matching(rule), held.preview()

        return await asyncio.to_thread(work)

    async def remove_keep_rule(self, session_id: int, rule_id: int) -> ContextView:
        """Stop keeping what rule ``rule_id`` matched (one ledger line); the context without it."""

        def work() -> ContextView:
            with self.curations.held(session_id) as held:
                curation = held.curation
                rules = curation.keep_rules
                gone = next((r for r in rules if r.id == rule_id), None)
                if gone is not None:
                    entry = LedgerEntry.keep_rule(curation.turn, gone.text, added=False)
                    self.store.remove_keep_rule(session_id, rule_id, entry)
                    curation.set_keep_rules(r for r in rules if r.id != rule_id)
                return held.preview()

        return await asyncio.to_thread(work)

    async def standing(self, session_id: int) -> tuple[Standing, ...]:
        """The session's standing instructions, superseded ones too, in conversation order."""

        def work() -> tuple[Standing, ...]:
            with self.curations.held(session_id) as held:
                return held.curation.state.standing.entries()

        return await asyncio.to_thread(work)

    async def change_standing(
        self, session_id: int, key: str | None, text: str | None
    ) -> tuple[tuple[Standing, ...], ContextView]:
        """The user's change to the standing instruction ``key``: their new words, or None to
        remove it; ``key`` None adds ``text`` as a new one. One ledger line, "by you"; the
        instructions and the context as they now stand."""
        from engine.standing.book import Edit

        def work() -> tuple[tuple[Standing, ...], ContextView]:
            with self.curations.held(session_id) as held:
                curation = held.curation
                book = curation.state.standing
                entry = next((s for s in book.entries() if s.key == key), None)
                if key is None and text:
                    after = curation.items[-1].id if curation.items else 0
                    change, action = Edit(0, None, None, text, after), "standing instruction added"
                elif entry is not None:
                    change = Edit(entry.edit_id or 0, entry.message_id, entry.original, text)
                    action = "standing instruction " + ("edited" if text else "removed")
                else:
                    return book.entries(), held.preview()
                ledger = LedgerEntry.standing(curation.turn, action, text or (entry.text if entry else ""))
                saved = self.store.save_standing_edit(session_id, change, ledger)
                book.set_edits([*(e for e in book.edits if e.id != saved.id), saved])
                return book.entries(), held.preview()

        return await asyncio.to_thread(work)

    async def inspect(self, session_id: int, item_id: int) -> ItemDetail:
        """One message's text, place in the context, score parts and ledger history ("why?")."""
        return await asyncio.to_thread(self._inspect, session_id, item_id)

    async def ledger(self, session_id: int) -> list[LedgerEntry]:
        """The session's forgetting log, oldest first."""
        return await asyncio.to_thread(self.store.ledger, session_id)

    async def draft(self, session_id: int | None, text: str) -> ContextView:
        """The context if ``text`` were sent now: what it would recall (changes nothing)."""
        return await asyncio.to_thread(self._draft, session_id, text)

    # --- in a worker thread ----------------------------------------------------------------------

    async def _change(
        self, session_id: int, action: Callable[[SessionCuration], CurationDelta]
    ) -> ContextView:
        return await asyncio.to_thread(self._change_now, session_id, action)

    def _change_now(self, session_id: int, action: Callable[[SessionCuration], CurationDelta]) -> ContextView:
        with self.curations.held(session_id) as held:
            held.save(action(held.curation))
            return held.preview()

    def _inspect(self, session_id: int, item_id: int) -> ItemDetail:
        from engine.curation.choosing import worth
        from engine.curation.context_building import build_view, unscored_reason
        from engine.curation.context_view import ItemDetail

        with self.curations.held(session_id) as held:
            curation = held.curation
            item = curation.by_id.get(item_id)
            if item is None:
                raise KeyError(f"no message {item_id} in this session")
            new = curation.last_user()
            assert new is not None  # the session has an item, and its first item is the user's
            result = curation.plan(new, system_prompt=held.system_prompt)
            placed = build_view(curation, result, new_id=new.id).item(item_id)
            scores = result.scores.get(item_id)
            unscored = "" if scores is not None else unscored_reason(item, new.id, result.recent_from)
            # What the user summarized, removed or kept aside does not compete for the room.
            mine = item.forgotten or item.attached
            ranked = worth(scores.total, item.tokens) if scores is not None and not mine else None
        assert placed is not None  # every item of the session is in its view
        return ItemDetail(
            view=placed,
            text=item.text,
            summary=item.summary,
            memory_role=item.memory_role.value,
            scores=scores,
            unscored=unscored,
            worth=ranked,
            ledger=tuple(self.store.ledger(session_id, target=str(item_id))),
        )

    def _draft(self, session_id: int | None, text: str) -> ContextView:
        from engine.curation.context_building import build_view
        from engine.curation.session_curation import SessionCuration

        curations = self.curations
        head = text[:DRAFT_CHARS]
        tokens = curations.counter.count(head)
        if session_id is None:  # no session yet: a curation of its own, no one else's to hold
            curation = SessionCuration(window=curations.window(), counter=curations.counter)
            draft = curation.analyse(DRAFT_ID, "user", head, tokens)
            result = curation.plan(draft, system_prompt=curations.system_prompt)
            return build_view(curation, result, new_id=DRAFT_ID, upcoming=True)
        with curations.held(session_id) as held:
            curation = held.curation
            draft = curation.analyse(DRAFT_ID, "user", head, tokens)
            result = curation.plan(
                draft, system_prompt=held.system_prompt, cold=held.earlier_candidates(draft)
            )
            return build_view(curation, result, new_id=DRAFT_ID, upcoming=True)
