"""One plan in the making (see :mod:`engine.curation.planning`): what each phase hands the next."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.advice.rules import Guidance
from engine.curation.consent import ConsentChoice, ConsentItem
from engine.curation.items import Item, ItemState
from engine.curation.operations import Operation
from engine.debugging.threads import DebugThread, RepeatGroup
from engine.standing.section import StandingSection


@dataclass(slots=True)
class PlanDraft:
    """One plan in the making: what each phase of :meth:`SessionCuration.plan` hands the next."""

    new: Item
    guidance: Guidance | None
    budget: int
    """The tokens the prompt may take (the reply's priming tokens set aside)."""
    system_cost: int = 0
    memory_cost: int = 0
    standing: StandingSection | None = None
    """The standing-instructions section (engine.standing.section), when there is one."""
    fixed: list[Item] = field(default_factory=list)
    """Pinned and system items other than the new message: always sent."""
    over_budget: bool = False
    remaining: int = 0
    """Tokens left once what is always sent (then the recent turns) is counted."""
    notes: list[str] = field(default_factory=list)
    recent: list[Item] = field(default_factory=list)
    recent_from: int = 0
    """The first turn of the recent turns (see planning.take_recent)."""
    excluded: set[int] = field(default_factory=set)
    """Fixed, recent and new items: never candidates for forgetting."""
    candidates: list[Item] = field(default_factory=list)
    cold: list[Item] = field(default_factory=list)
    """Messages before the session's curated cut that the new message refers to (see
    :mod:`engine.curation.cold_recall`): not the session's items, recalled while they fit."""
    chosen: set[int] = field(default_factory=set)
    """Items sent verbatim (besides fixed ones and the new message)."""
    left_out: list[int] = field(default_factory=list)
    retained: dict[int, str] = field(default_factory=dict)
    """Items the curator model retains, with its reason."""
    rule_matches: Mapping[int, str] = field(default_factory=dict)
    """Candidates a keep rule matches, with the rule's reason."""
    kept_by_rule: dict[int, str] = field(default_factory=dict)
    """Matched candidates the plan sends verbatim for their rule."""
    set_aside: set[int] = field(default_factory=set)
    repeats: Mapping[int, RepeatGroup] = field(default_factory=dict)
    """Repeated pastes of an error other than its latest (see :mod:`engine.curation.repeats`)."""
    advised_consent: Mapping[int, ConsentChoice] = field(default_factory=dict)
    consent_items: list[ConsentItem] = field(default_factory=list)
    protected_ids: set[int] = field(default_factory=set)
    """The user's messages, which only a consent answer may change."""
    reserve: int = 0
    """Tokens kept for the summary section and the story (see :func:`engine.curation.choosing.choose`)."""
    story_reserve: int = 0
    """Tokens kept for the story so far (see :mod:`engine.summaries.story`)."""
    story: tuple[tuple[tuple[int, ...], str], ...] = ()
    """The story section's lines: the messages each quotes, and the line."""
    threads: list[DebugThread] = field(default_factory=list)
    """The debugging threads worth a line in this request (see engine.curation.repeats)."""
    threads_room: int = 0
    """Tokens kept for their section."""
    room: int = 0
    """Tokens left for the summary section beyond :attr:`reserve` once verbatim items are chosen."""
    extra: int = 0
    """Tokens past the budget (up to the window's hard limit) that only the user's messages kept
    whole by their answer may take."""
    pinned_cost: int = 0
    asked_left_out: set[int] = field(default_factory=set)
    """The user's messages that cannot fit: asked about, not sent until answered."""
    past_budget: list[int] = field(default_factory=list)
    """The user's kept messages sent past the budget."""
    recall_reasons: dict[int, str] = field(default_factory=dict)
    operations: list[Operation] = field(default_factory=list)
    new_summaries: dict[int, str] = field(default_factory=dict)
    waiting: set[int] = field(default_factory=set)
    after_state: dict[int, ItemState] = field(default_factory=dict)

    @property
    def turn(self) -> int:
        return self.new.turn
