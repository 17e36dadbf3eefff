"""The user's own actions on a session's curation: pin, restore, forget, answer consent.

Functions over a session's :class:`engine.curation.curation_state.CurationState`, apart from the
planner: each changes item states directly (the user decided; nothing to plan) and returns the delta
with its ledger entries, every one of them recorded as the user's choice.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.curation.consent import ConsentChoice, ConsentItem, ConsentRequest
from engine.curation.curation_state import CurationState
from engine.curation.items import Item, ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.pins import PinVerdict, judge_pin
from engine.curation.result import CurationDelta, cost


class CurationRefused(ValueError):
    """A user action the engine will not carry out; the message says why and what to do instead."""


class PinRefused(CurationRefused):
    """A pin past the whole budget, or past the pin limit without the user's confirmation."""

    def __init__(self, verdict: PinVerdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


def pin(state: CurationState, item_id: int, *, pinned: bool = True) -> CurationDelta:
    """Pin (or unpin) an item. A pinned item is always sent verbatim and never pruned or
    summarized, so pinning a pruned or summarized item restores it too."""
    item = state.item(item_id)
    if item.pinned == pinned:
        return CurationDelta()
    ledger: list[LedgerEntry] = []
    if pinned and item.state is not ItemState.ACTIVE:
        ledger.extend(restore(state, item_id, reason="restored because you pinned it").ledger)
    item.pinned = pinned
    if pinned or item.role == "system":
        state.fixed.add(item.id)
    else:
        state.fixed.discard(item.id)
    reason = "pinned by you" if pinned else "unpinned by you"
    ledger.append(
        LedgerEntry.of(Operation(OpKind.PIN if pinned else OpKind.UNPIN, item.id, reason, state.turn))
    )
    return CurationDelta(items=(item,), ledger=tuple(ledger))


def pinned_tokens(state: CurationState) -> int:
    """What the pinned messages (not the system's) cost in every request."""
    return sum(cost(state.by_id[i].tokens) for i in state.fixed if state.by_id[i].pinned)


def pin_verdict(state: CurationState, item_id: int) -> PinVerdict:
    """Whether pinning ``item_id`` may happen now (see :mod:`engine.curation.pins`), with the numbers.
    :meth:`pin` itself does not check: the caller asks this first (replay pins as told)."""
    item = state.item(item_id)
    pinned = pinned_tokens(state) - (cost(item.tokens) if item.pinned else 0)
    return judge_pin(
        item_id=item.id,
        label=item.label,
        item_tokens=cost(item.tokens),
        pinned_tokens=pinned,
        budget=state.budget.tokens,
        limit=state.pin_limit,
    )


def restore(state: CurationState, item_id: int, *, reason: str = "restored by you") -> CurationDelta:
    """Make a pruned or summarized item active (verbatim) again; its original text is untouched."""
    item = state.item(item_id)
    if item.state is ItemState.ACTIVE:
        return CurationDelta()
    operation = Operation.moving(item, ItemState.ACTIVE, reason, state.turn)
    item.state = ItemState.ACTIVE
    state.settle_text(item)
    item.forgotten = False
    state.restored.add(item.id)
    state.debugging.kept.add(item.id)  # a copy of a repeated error brought back competes again
    return CurationDelta(items=(item,), ledger=(LedgerEntry.of(operation),))


def forget(state: CurationState, item_id: int) -> CurationDelta:
    """Prune an item now because the user asked to (it stays in the store and can be restored).

    The request is the user's consent for their own messages; it is logged as such. Unlike what
    the engine prunes, it is not recalled when a later message refers to it: only a restore (or
    a pin) brings it back. A pinned item is refused: the pin says "always send this", so it has
    to be taken off first.
    """
    item = state.item(item_id)
    if item.pinned:
        raise CurationRefused(f"{item.label} is pinned: unpin it before forgetting it.")
    if item.forgotten and item.state is ItemState.PRUNED:
        return CurationDelta()
    ledger: list[LedgerEntry] = []
    if item.user_owned:
        ledger.append(
            LedgerEntry.consent(state.turn, item.id, ConsentChoice.REMOVE.value, "you asked to forget it")
        )
    operation = Operation.moving(
        item, ItemState.PRUNED, "forgotten by you", state.turn, requires_consent=item.user_owned
    )
    item.state = ItemState.PRUNED
    item.forgotten = True
    state.settle_text(item)
    ledger.append(LedgerEntry.of(operation))
    return CurationDelta(items=(item,), ledger=tuple(ledger))


def answer_consent(
    state: CurationState, answers: Mapping[int, ConsentChoice], *, remember: ConsentChoice | None = None
) -> CurationDelta:
    """Record the user's answers; "summarize", "remove" and "attach" take effect now, "keep" for good.

    Args:
        answers: Item id → the user's choice for it.
        remember: Apply this choice to every later request of the session too.
    """
    if remember is ConsentChoice.ATTACH:
        raise CurationRefused(
            "Keeping a message aside answers for that message only; it is not remembered for all."
        )
    ledger: list[LedgerEntry] = []
    changed: list[Item] = []
    for item_id, choice in answers.items():
        item = state.item(item_id)
        ledger.append(LedgerEntry.consent(state.turn, item.id, choice.value, "answered by you"))
        if choice is ConsentChoice.KEEP:
            item.kept_by_user = True
            changed.append(item)
            continue
        if item.pinned:
            continue
        # The user's own word holds until they restore it: a summarized or removed message is
        # never recalled; one kept aside ("attach") comes back whole when referred to.
        attach = choice is ConsentChoice.ATTACH
        item.kept_by_user, item.forgotten = attach, not attach
        after = ItemState.SUMMARIZED if choice is ConsentChoice.SUMMARIZE else ItemState.PRUNED
        if after is ItemState.SUMMARIZED:
            item.summary = item.summary or summary_now(state, item)
        operation = Operation.moving(
            item,
            after,
            "you chose to keep it aside: sent whole when a message refers to it"
            if attach
            else f"you chose to {choice.value} it",
            state.turn,
            requires_consent=True,
        )
        item.state = after
        state.settle_text(item)
        changed.append(item)
        ledger.append(LedgerEntry.of(operation))
    if remember is not None:
        state.policy = remember
        ledger.append(
            LedgerEntry(
                EntryKind.CONSENT, state.turn, "session", remember.value, "apply to all in this session"
            )
        )
    return CurationDelta(
        items=tuple(changed),
        ledger=tuple(ledger),
        policy=state.policy,
        policy_changed=remember is not None,
    )


def compact(state: CurationState, *, keep_turns: int = 2) -> tuple[CurationDelta, ConsentRequest | None]:
    """Summarize the session's older turns now, at the user's request (/compact).

    The model's replies and tool items older than the last ``keep_turns`` turns are summarized
    at once (pinned items are left alone). The user's own older messages are summarized only
    with their consent: the session's "apply to all" answer if it is summarize, otherwise they
    come back as a consent request for the user to answer (they stay as they are meanwhile).

    Returns:
        The delta to save, and the consent request for the user's messages, if any.
    """
    floor = state.turn - keep_turns
    older = [
        item
        for item in state.by_id.values()
        if item.turn <= floor
        and item.state is ItemState.ACTIVE
        and not item.pinned
        and item.role != "system"
        and not item.kept_by_user
    ]
    changed: list[Item] = []
    ledger: list[LedgerEntry] = []
    asked: list[ConsentItem] = []
    for item in sorted(older, key=lambda i: i.position):
        if item.user_owned and state.policy is not ConsentChoice.SUMMARIZE:
            asked.append(ConsentItem(item.id, item.preview, item.tokens, ConsentChoice.SUMMARIZE))
            continue
        if item.user_owned:
            ledger.append(
                LedgerEntry.consent(
                    state.turn,
                    item.id,
                    ConsentChoice.SUMMARIZE.value,
                    "answered by your choice for this session (apply to all)",
                )
            )
        item.summary = item.summary or summary_now(state, item)
        operation = Operation.moving(
            item, ItemState.SUMMARIZED, "compacted by you", state.turn, requires_consent=item.user_owned
        )
        item.state = ItemState.SUMMARIZED
        state.settle_text(item)
        changed.append(item)
        ledger.append(LedgerEntry.of(operation))
    request = ConsentRequest(state.turn, tuple(asked)) if asked else None
    return CurationDelta(items=tuple(changed), ledger=tuple(ledger)), request


def summary_now(state: CurationState, item: Item) -> str:
    """A summary of ``item`` at once: the model's when it has written one (and asked for, to
    replace this one later, when not), else the offline summarizer's."""
    if state.model_summaries is not None:
        return state.model_summaries.now(item)
    return state.summarizer.summarize(item)
