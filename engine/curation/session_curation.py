"""The curation engine: each turn, decide what the model sees, within budget, explainably and reversibly.

:class:`SessionCuration` holds one session's items, indexes and entity registry in memory
(:mod:`engine.curation.session_items`). Each turn, :meth:`SessionCuration.plan`
(:mod:`engine.curation.planning`) scores the items against the new message, fits a prompt into
the budget and proposes operations;
:meth:`SessionCuration.apply` carries them out and returns a :class:`CurationDelta` that the store
writes in one transaction (state changes and ledger together). The user's own actions are in
:mod:`engine.curation.user_actions`.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.chat import BuildProgress, HistoryCut
from engine.curation.budget import DEFAULT_PROFILE, Budget, Profile
from engine.curation.consent import ConsentChoice, ConsentItem
from engine.curation.items import Item, ItemState, MemoryRole
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.pins import DEFAULT_PIN_LIMIT, SUGGEST_TURNS
from engine.curation.planning import RECENT_TURNS, Planning
from engine.curation.result import (
    CurationDelta,
    CurationResult,
    cost,
)
from engine.curation.user_actions import CurationRefused, UserActions
from engine.entities.registry import EntityChange
from engine.protocols.models import TokenCounter
from engine.summaries.book import SummaryBook
from engine.summaries.model import StoredSummary
from engine.summaries.offline import ExtractiveSummarizer, PreparedSummaries, Summarizer
from engine.summaries.section import SummarySection
from engine.text.analysis import Analysis

__all__ = ["RECENT_TURNS", "CurationRefused", "SessionCuration"]


class SessionCuration(Planning, UserActions):
    """One session's curation state and the engine that plans its turns."""

    def __init__(
        self,
        *,
        window: int,
        counter: TokenCounter,
        profile: Profile = DEFAULT_PROFILE,
        budget_ratio: float | None = None,
        summarizer: Summarizer | None = None,
        policy: ConsentChoice | None = None,
    ) -> None:
        super().__init__(counter)
        self.profile = profile
        self.budget = Budget(window, budget_ratio if budget_ratio is not None else profile.budget_ratio)
        self.summarizer: PreparedSummaries = PreparedSummaries(summarizer or ExtractiveSummarizer())
        self.model_summaries: SummaryBook | None = None
        """Summaries a model writes in the background, when one is connected (engine.summaries.book)."""
        self.policy = policy
        """The user's answer for every consent request of this session ("apply to all"), if given."""
        self.pin_limit = DEFAULT_PIN_LIMIT
        """Share of the budget pins may take before another pin asks first (see engine.curation.pins)."""
        self._recall_turns: dict[int, list[int]] = {}
        """The turns each item was sent recalled in (the last few), for pin suggestions."""
        self._summary_section = SummarySection(counter)
        self._recalled: set[int] = set()
        """Items the last applied plan recalled (sent verbatim while pruned or summarized)."""
        self._cold_recalled: set[int] = set()
        """Messages before the cut that the last applied plan recalled (see engine.curation.cold_recall)."""
        self._left_out: set[int] = set()
        """Items the last applied plan left out of its request (waiting for consent, or too big)."""
        self._restored: set[int] = set()
        """Items the user restored since the last applied plan: the next request sends them first."""
        self.saved_in_session = 0
        """Tokens the applied plans of this session have saved, summed over its turns."""
        self._consent_items: dict[tuple[int, ConsentChoice], ConsentItem] = {}
        """Consent requests by item and proposal, reused while unanswered: a long session that never answers
        asks about thousands of items every turn, and rebuilding them all costs time and garbage."""
        self.cut: HistoryCut | None = None
        """Where a session too long to curate whole was cut: only the messages after it are items."""
        self.building: BuildProgress | None = None
        """While a long session's curation is still being read (its latest messages first), how far
        it has got: requests meanwhile are planned from the messages read so far."""
        self.memory = ""
        """The memory section this session's prompts carry (:mod:`engine.memory.memories`); "" for none."""
        self._memory_cost = 0
        self._prioritized: dict[int, str] = {}
        """Items the last applied plan kept on the curator model's advice, with its reason (logged
        when they start being kept, or for another reason, not on every turn)."""

    # --- the prompt's fixed parts ---------------------------------------------------------------

    def set_memory(self, text: str) -> None:
        """Carry ``text`` as the prompt's memory section from the next plan on ("" for none)."""
        self.memory = text
        self._memory_cost = cost(self.counter.count(text)) if text else 0

    def fit_window(self, window: int) -> None:
        """Budget for a different context window from the next plan on (same ratio)."""
        if window != self.budget.window:
            self.budget = Budget(window, self.budget.ratio)

    def prepare_summaries(self) -> None:
        """Write ahead the offline summaries of the items a next turn may demote (the active
        ones; see :class:`PreparedSummaries`). Not when a model writes them."""
        if self.model_summaries is None:
            active = ItemState.ACTIVE
            self.summarizer.prepare(i for i in self.items if i.state is active and not i.pinned)

    # --- a stored session ------------------------------------------------------------------------

    def load_record(
        self,
        item_id: int,
        *,
        state: ItemState,
        pinned: bool,
        kept_by_user: bool,
        summary: str | None,
        forgotten: bool = False,
    ) -> None:
        """Give an item the state the store remembers for it (when a session is rebuilt, or caught
        up with the store)."""
        item = self._item(item_id)
        item.state, item.pinned, item.kept_by_user, item.summary = state, pinned, kept_by_user, summary
        item.forgotten = forgotten
        if pinned:
            self._fixed.add(item_id)
        elif item.role != "system":
            self._fixed.discard(item_id)  # unpinned since (see engine.curation.state.catch_up)
        self.settle_text(item)

    def adopt_summary(self, summary: StoredSummary, model: str) -> CurationDelta:
        """A summary the model wrote: used from the next plan on, and in place of the quick one an
        item summarized meanwhile carries (the user asked for it, or the model failed once)."""
        if self.model_summaries is not None:
            self.model_summaries.add(summary)
        item = self.by_id.get(summary.message_id)
        if (
            item is None
            or item.state is not ItemState.SUMMARIZED
            or item.summary == summary.text
            or self.model_summaries is None
            or self.model_summaries.written(item) is None
        ):
            return CurationDelta()
        item.summary = summary.text
        operation = Operation(
            OpKind.TRANSFORM,
            item.id,
            f"summary rewritten by {model}",
            self.turn,
            before=item.state,
            after=item.state,
            detail=f"{len(summary.text):,} characters",
        )
        return CurationDelta(items=(item,), ledger=(LedgerEntry.of(operation),))

    def _hold_recalled(self, recalled: set[int], result: CurationResult) -> None:
        """Note the items sent verbatim though summarized or pruned: they hold their texts (as
        sent) while they stay recalled, rather than read them from the store on every plan."""
        sent = {
            m.sources[0]: m.content for m in result.messages if m.form == "verbatim" and len(m.sources) == 1
        }
        for item_id in recalled - self._recalled:
            item = self.by_id[item_id]
            item.held_text = sent.get(item_id) or item.text
        for item_id in self._recalled - recalled:
            if (gone := self.by_id.get(item_id)) is not None:
                self.settle_text(gone)
        self._recalled = recalled

    # --- applying --------------------------------------------------------------------------------

    def apply(self, result: CurationResult) -> CurationDelta:
        """Carry out a plan: change item states, record summaries and entity states, log it all."""
        ledger = self._pending
        self._pending = []
        changed: dict[int, Item] = {}
        sent = {source for m in result.messages if m.form == "verbatim" for source in m.sources}
        if result.curator_note is not None:
            ledger.append(result.curator_note)
        for operation in result.operations:
            item = self.by_id.get(operation.target)
            if item is None:  # a message before the cut, recalled: logged, nothing of it is held
                ledger.append(LedgerEntry.of(operation))
                continue
            if operation.op is OpKind.TAG and operation.detail:
                item.memory_role = MemoryRole(operation.detail)
                item.prior = None  # the role weighs into the cached prior
                # Stored again with its analysis: a rebuilt session keeps the refined role.
                self._unstored.append(
                    (item.id, Analysis(item.mentions, self.terms_of(item), item.memory_role))
                )
            if operation.changes_state and operation.after is not None:
                item.state = operation.after
                if operation.op is OpKind.TRANSFORM:
                    item.summary = result.new_summaries.get(item.id, item.summary)
                self.settle_text(item)
                changed[item.id] = item
            if operation.requires_consent:
                ledger.append(
                    LedgerEntry.consent(
                        operation.turn,
                        item.id,
                        (self.policy or ConsentChoice.KEEP).value,
                        "answered by your choice for this session (apply to all)",
                    )
                )
            ledger.append(LedgerEntry.of(operation))
        # Logged when an item starts being left out, not again on every turn it stays out.
        asked = result.asked_left_out
        for item_id in set(result.left_out) - self._left_out:
            ledger.append(
                LedgerEntry(
                    EntryKind.OVERFLOW,
                    result.turn,
                    str(item_id),
                    "left out of this request",
                    "your message does not fit; not sent until you choose: keep it aside, summarize it "
                    "or leave it out"
                    if item_id in asked
                    else "did not fit the budget; left out of this request only, nothing about it changed",
                )
            )
        if result.over_budget:
            ledger.append(
                LedgerEntry(EntryKind.OVERFLOW, result.turn, "budget", "over budget", " ".join(result.notes))
            )
        entity_changes = self.registry.commit(result.entities)
        ledger.extend(self._entity_entries(entity_changes, result.turn))
        recalled = {i for i in sent if i in self.by_id and self.by_id[i].state is not ItemState.ACTIVE}
        self._hold_recalled(recalled, result)
        self._note_recalls(recalled, result.turn)
        self._cold_recalled = {i.id for i in result.cold}
        self._restored = set()
        self._left_out = set(result.left_out)
        self._prioritized = dict(result.prioritized)
        touched = self._touched | {c.ref for c in entity_changes}
        self._touched = set()
        self.saved_in_session += result.saved_tokens
        return CurationDelta(
            items=tuple(changed.values()),
            entities=tuple(sorted(touched)),
            ledger=tuple(ledger),
            saved_tokens=result.saved_tokens,
        )

    def _note_recalls(self, recalled: set[int], turn: int) -> None:
        """Remember the turns each item came back in (a plan applied twice for a turn counts once)."""
        for item_id in recalled:
            turns = self._recall_turns.setdefault(item_id, [])
            if not turns or turns[-1] != turn:
                turns.append(turn)
                del turns[:-SUGGEST_TURNS]

    def _entity_entries(self, changes: Iterable[EntityChange], turn: int) -> list[LedgerEntry]:
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
            if change.ref in self.registry.records
        ]
