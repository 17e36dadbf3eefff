"""Carrying out a plan: :func:`apply` changes item states, records summaries and entity states, and
logs it all, on a session's :class:`engine.curation.curation_state.CurationState` (called by
``SessionCuration.apply``; the store writes the delta it returns in one transaction)."""

from __future__ import annotations

from collections.abc import Iterable

from engine.curation.consent import ConsentChoice
from engine.curation.curation_state import CurationState
from engine.curation.items import Item, ItemState, MemoryRole
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import OpKind
from engine.curation.pins import SUGGEST_TURNS
from engine.curation.result import CurationDelta, CurationResult
from engine.entities.registry import EntityChange
from engine.text.analysis import Analysis


def hold_recalled(state: CurationState, recalled: set[int], result: CurationResult) -> None:
    """Note the items sent verbatim though summarized or pruned: they hold their texts (as
    sent) while they stay recalled, rather than read them from the store on every plan."""
    sent = {m.sources[0]: m.content for m in result.messages if m.form == "verbatim" and len(m.sources) == 1}
    for item_id in recalled - state.recalled:
        item = state.by_id[item_id]
        item.held_text = sent.get(item_id) or item.text
    for item_id in state.recalled - recalled:
        if (gone := state.by_id.get(item_id)) is not None:
            state.settle_text(gone)
    state.recalled = recalled


def apply(state: CurationState, result: CurationResult) -> CurationDelta:
    """Carry out a plan: change item states, record summaries and entity states, log it all."""
    ledger = state.pending
    state.pending = []
    changed: dict[int, Item] = {}
    sent = {source for m in result.messages if m.form == "verbatim" for source in m.sources}
    if result.curator_note is not None:
        ledger.append(result.curator_note)
    for operation in result.operations:
        item = state.by_id.get(operation.target)
        if item is None:  # a message before the cut, recalled: logged, nothing of it is held
            ledger.append(LedgerEntry.of(operation))
            continue
        if operation.op is OpKind.TAG and operation.detail:
            item.memory_role = MemoryRole(operation.detail)
            item.prior = None  # the role weighs into the cached prior
            # Stored again with its analysis: a rebuilt session keeps the refined role.
            state.unstored.append((item.id, Analysis(item.mentions, state.terms_of(item), item.memory_role)))
        if operation.changes_state and operation.after is not None:
            item.state = operation.after
            if operation.op is OpKind.TRANSFORM:
                item.summary = result.new_summaries.get(item.id, item.summary)
            state.settle_text(item)
            changed[item.id] = item
        if operation.requires_consent:
            ledger.append(
                LedgerEntry.consent(
                    operation.turn,
                    item.id,
                    (state.policy or ConsentChoice.KEEP).value,
                    "answered by your choice for this session (apply to all)",
                )
            )
        ledger.append(LedgerEntry.of(operation))
    # Logged when an item starts being left out, not again on every turn it stays out.
    asked = result.asked_left_out
    # In conversation order: a set's order follows the ids, which differ from store to store.
    for item_id in sorted(
        set(result.left_out) - state.left_out, key=lambda i: (i in state.by_id and state.by_id[i].position, i)
    ):
        ledger.append(
            LedgerEntry(
                EntryKind.OVERFLOW,
                result.turn,
                str(item_id),
                "left out of this request",
                "your message does not fit; not sent until you choose: keep it aside, summarize it "
                "or leave it out"
                if item_id in asked
                else "did not fit the budget; a quick summary of it was sent in its place, in this "
                "request only; nothing about it changed"
                if item_id in result.stand_ins
                else "did not fit the budget; left out of this request only, nothing about it changed",
            )
        )
    if result.over_budget:
        ledger.append(
            LedgerEntry(EntryKind.OVERFLOW, result.turn, "budget", "over budget", " ".join(result.notes))
        )
    entity_changes = state.registry.commit(result.entities)
    ledger.extend(entity_entries(state, entity_changes, result.turn))
    recalled = {i for i in sent if i in state.by_id and state.by_id[i].state is not ItemState.ACTIVE}
    hold_recalled(state, recalled, result)
    note_recalls(state, recalled, result.turn)
    state.cold_recalled = {i.id for i in result.cold}
    state.restored = set()
    state.left_out = set(result.left_out)
    state.prioritized = dict(result.prioritized)
    state.kept_by_rule = dict(result.kept_by_rule)
    touched = state.touched | {c.ref for c in entity_changes}
    state.touched = set()
    state.saved_in_session += result.saved_tokens
    return CurationDelta(
        items=tuple(changed.values()),
        entities=tuple(sorted(touched)),
        ledger=tuple(ledger),
        saved_tokens=result.saved_tokens,
    )


def note_recalls(state: CurationState, recalled: set[int], turn: int) -> None:
    """Remember the turns each item came back in (a plan applied twice for a turn counts once)."""
    for item_id in recalled:
        turns = state.recall_turns.setdefault(item_id, [])
        if not turns or turns[-1] != turn:
            turns.append(turn)
            del turns[:-SUGGEST_TURNS]


def entity_entries(state: CurationState, changes: Iterable[EntityChange], turn: int) -> list[LedgerEntry]:
    return [
        LedgerEntry(
            EntryKind.ENTITY,
            turn,
            change.ref,
            change.after.value,
            change.reason,
            before=change.before.value if change.before else None,
            after=change.after.value,
        )
        for change in changes
        if change.ref in state.registry.records
    ]
