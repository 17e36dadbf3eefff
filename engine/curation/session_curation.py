"""The curation engine: each turn, decide what the model sees, within budget, explainably and reversibly.

:class:`SessionCuration` owns one session's :class:`CurationState` (its items, indexes and entity
registry in memory: :mod:`engine.curation.curation_state`). Each turn, :meth:`SessionCuration.plan`
(:mod:`engine.curation.planning`) scores the items against the new message, fits a prompt into the
budget and proposes operations; :meth:`SessionCuration.apply` carries them out and returns a
:class:`CurationDelta` that the store writes in one transaction (state changes and ledger together).
The user's own actions are in :mod:`engine.curation.user_actions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Generic, NoReturn, ParamSpec, TypeVar

from engine.advice.advice import AdviceOutcome
from engine.advice.rules import Guidance
from engine.curation import applying, keep_rules, planning, user_actions
from engine.curation.budget import DEFAULT_PROFILE, Budget, Profile
from engine.curation.cold_recall import NONE, ColdCandidates
from engine.curation.consent import ConsentChoice, ConsentRequest
from engine.curation.curation_state import CurationState
from engine.curation.items import Item, ItemState
from engine.curation.keep_rules import KeepRule
from engine.curation.ledger import LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.pins import PinVerdict
from engine.curation.planning import RECENT_TURNS
from engine.curation.result import CurationDelta, CurationResult
from engine.curation.user_actions import CurationRefused
from engine.protocols.models import TokenCounter
from engine.protocols.store import ItemRecord
from engine.summaries.model import StoredSummary
from engine.summaries.offline import ExtractiveSummarizer, PreparedSummaries, Summarizer
from engine.summaries.section import SummarySection

__all__ = ["RECENT_TURNS", "CurationRefused", "SessionCuration"]

_T = TypeVar("_T")
_P = ParamSpec("_P")


def _then_add(analyse: Callable[_P, Item], add: Callable[[Item], Item]) -> Callable[_P, Item]:
    """``analyse``, then ``add`` of the item it made: one signature, the analysis's."""

    def analysed_and_added(*args: _P.args, **kwargs: _P.kwargs) -> Item:
        return add(analyse(*args, **kwargs))

    return analysed_and_added


class _Reads(Generic[_T]):
    """An attribute of :class:`SessionCuration` that is its state's (``read(state)``): others read
    the state, or call its operations, through the curation, and never assign it through it."""

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[CurationState], _T]) -> None:
        self._read = read

    def __get__(self, curation: SessionCuration, owner: type[SessionCuration] | None = None) -> _T:
        return self._read(curation.state)

    def __set__(self, curation: SessionCuration, value: NoReturn) -> NoReturn:
        raise AttributeError("read-only: the curation's state is written by its operations")


class SessionCuration:
    """One session's curation: it owns its :class:`CurationState` (:attr:`state`) and the operations
    on it. Others read the state through the attributes below; only loading from the store
    (:mod:`engine.curation.stored`) and the session cache write parts of it directly."""

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
        self.state = CurationState(
            counter=counter,
            profile=profile,
            budget=Budget(window, budget_ratio if budget_ratio is not None else profile.budget_ratio),
            summarizer=PreparedSummaries(summarizer or ExtractiveSummarizer()),
            summary_section=SummarySection(counter),
            policy=policy,
        )

    # --- what the state holds, to read ------------------------------------------------------------

    items = _Reads(lambda state: state.items)
    by_id = _Reads(lambda state: state.by_id)
    turn = _Reads(lambda state: state.turn)
    registry = _Reads(lambda state: state.registry)
    term_index = _Reads(lambda state: state.term_index)
    counter = _Reads(lambda state: state.counter)
    profile = _Reads(lambda state: state.profile)
    budget = _Reads(lambda state: state.budget)
    policy = _Reads(lambda state: state.policy)
    pin_limit = _Reads(lambda state: state.pin_limit)
    summarizer = _Reads(lambda state: state.summarizer)
    model_summaries = _Reads(lambda state: state.model_summaries)
    memory = _Reads(lambda state: state.memory)
    cut = _Reads(lambda state: state.cut)
    building = _Reads(lambda state: state.building)
    saved_in_session = _Reads(lambda state: state.saved_in_session)
    keep_rules = _Reads(lambda state: tuple(state.keep_rules))

    def last_user(self) -> Item | None:
        """The session's last message of the user's (what a request is planned for), if any."""
        return next((i for i in reversed(self.state.items) if i.role == "user"), None)

    def recall_turns(self, item_id: int) -> list[int]:
        """The turns ``item_id`` was last sent recalled in (for pin suggestions)."""
        return self.state.recall_turns.get(item_id, [])

    def items_mentioning(self, ref: str) -> Iterable[int]:
        """Ids of the items that mention the entity ``ref``."""
        return self.state.entity_index.items_with(ref)

    # --- items ------------------------------------------------------------------------------------

    analyse = _Reads(lambda state: state.analyse)
    """An item for a text, not yet part of the session (see :meth:`CurationState.analyse`)."""
    add = _Reads(lambda state: state.add)
    """Make an item part of the session (see :meth:`CurationState.add`)."""

    add_message = _Reads(lambda state: _then_add(state.analyse, state.add))
    """:meth:`analyse` then :meth:`add`, with :meth:`analyse`'s arguments."""

    take_unstored = _Reads(lambda state: state.take_unstored)
    """Analyses of items added since the last call that the store does not have yet."""
    mark_saved_entities = _Reads(lambda state: state.mark_saved_entities)
    """Note as saved the entities the store already holds as they were rebuilt."""

    # --- the prompt's fixed parts ---------------------------------------------------------------

    def set_memory(self, text: str) -> None:
        """Carry ``text`` as the prompt's memory section from the next plan on ("" for none)."""
        self.state.set_memory(text)

    def fit_window(self, window: int) -> None:
        """Budget for a different context window from the next plan on (same ratio)."""
        if window != self.state.budget.window:
            self.state.budget = Budget(window, self.state.budget.ratio)

    def prepare_summaries(self) -> None:
        """Write ahead the offline summaries of the items a next turn may demote (the active
        ones; see :class:`PreparedSummaries`). Not when a model writes them."""
        if self.state.model_summaries is None:
            active = ItemState.ACTIVE
            self.state.summarizer.prepare(i for i in self.state.items if i.state is active and not i.pinned)

    # --- planning (engine.curation.planning) ------------------------------------------------------

    def plan(
        self,
        new: Item,
        *,
        system_prompt: str = "",
        guidance: Guidance | None = None,
        cold: ColdCandidates = NONE,
    ) -> CurationResult:
        """The prompt for ``new`` and the operations that get there (see :func:`planning.plan`)."""
        return planning.plan(self.state, new, system_prompt=system_prompt, guidance=guidance, cold=cold)

    def judge(self, outcome: AdviceOutcome, new: Item) -> Guidance:
        """The curator model's answer about ``new``, checked against this session."""
        return planning.judge_advice(self.state, outcome, new)

    def fits_verbatim(self, new: Item, *, system_prompt: str = "") -> bool:
        """Whether the whole conversation, every message verbatim, fits the budget for ``new``."""
        return planning.fits_verbatim(self.state, new, system_prompt=system_prompt)

    def apply(self, result: CurationResult) -> CurationDelta:
        """Carry out a plan (see :func:`engine.curation.applying.apply`); the delta to save."""
        return applying.apply(self.state, result)

    # --- the user's actions (engine.curation.user_actions) -----------------------------------------

    def set_keep_rules(self, rules: Iterable[KeepRule]) -> None:
        """The user's keep rules from now on (stored ones, or one added or removed)."""
        self.state.keep_rules = list(rules)

    def matching(self, rule: KeepRule) -> int:
        """How many of the session's messages ``rule`` matches now."""
        state = self.state
        return len(keep_rules.matches([rule], state.items, state.term_index, state.dense))

    def pin(self, item_id: int, *, pinned: bool = True) -> CurationDelta:
        """Pin (or unpin) an item; pinning a pruned or summarized item restores it too."""
        return user_actions.pin(self.state, item_id, pinned=pinned)

    def pinned_tokens(self) -> int:
        """What the pinned messages (not the system's) cost in every request."""
        return user_actions.pinned_tokens(self.state)

    def pin_verdict(self, item_id: int) -> PinVerdict:
        """Whether pinning ``item_id`` may happen now, with the numbers (:meth:`pin` does not check)."""
        return user_actions.pin_verdict(self.state, item_id)

    def restore(self, item_id: int, *, reason: str = "restored by you") -> CurationDelta:
        """Make a pruned or summarized item active (verbatim) again."""
        return user_actions.restore(self.state, item_id, reason=reason)

    def forget(self, item_id: int) -> CurationDelta:
        """Prune an item now because the user asked to (restorable; a pinned one is refused)."""
        return user_actions.forget(self.state, item_id)

    def answer_consent(
        self, answers: Mapping[int, ConsentChoice], *, remember: ConsentChoice | None = None
    ) -> CurationDelta:
        """Record the user's answers to a consent request (and "apply to all", if ``remember``)."""
        return user_actions.answer_consent(self.state, answers, remember=remember)

    def compact(self, *, keep_turns: int = 2) -> tuple[CurationDelta, ConsentRequest | None]:
        """Summarize the session's older turns now, at the user's request (/compact)."""
        return user_actions.compact(self.state, keep_turns=keep_turns)

    def summary_now(self, item: Item) -> str:
        """A summary of ``item`` at once: the model's when it has written one, else the offline one."""
        return user_actions.summary_now(self.state, item)

    # --- a stored session ------------------------------------------------------------------------

    def load_record(self, record: ItemRecord) -> None:
        """Give an item the state the store remembers for it (when a session is rebuilt, or caught
        up with the store)."""
        item_id = record.message_id
        item = self.state.item(item_id)
        item.state, item.pinned, item.kept_by_user = record.state, record.pinned, record.kept_by_user
        item.summary, item.forgotten = record.summary, record.forgotten
        if record.pinned:
            self.state.fixed.add(item_id)
        elif item.role != "system":
            self.state.fixed.discard(item_id)  # unpinned since (see engine.curation.stored.catch_up)
        self.state.settle_text(item)

    def adopt_summary(self, summary: StoredSummary, model: str) -> CurationDelta:
        """A summary the model wrote: used from the next plan on, and in place of the quick one an
        item summarized meanwhile carries (the user asked for it, or the model failed once)."""
        book = self.state.model_summaries
        if book is not None:
            book.add(summary)
        item = self.state.by_id.get(summary.message_id)
        if (
            item is None
            or item.state is not ItemState.SUMMARIZED
            or item.summary == summary.text
            or book is None
            or book.written(item) is None
        ):
            return CurationDelta()
        item.summary = summary.text
        operation = Operation(
            OpKind.TRANSFORM,
            item.id,
            f"summary rewritten by {model}",
            self.state.turn,
            before=item.state,
            after=item.state,
            detail=f"{len(summary.text):,} characters",
        )
        return CurationDelta(items=(item,), ledger=(LedgerEntry.of(operation),))
