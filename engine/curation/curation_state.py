"""One session's curation state: its items in conversation order, analysed and indexed, and what
the last applied plan and the user's actions left behind.

The one place this state is declared. :class:`engine.curation.session_curation.SessionCuration`
owns it; planning (:mod:`engine.curation.planning`) reads it, and the user's actions
(:mod:`engine.curation.user_actions`) and ``SessionCuration.apply`` change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.chat import BuildProgress, HistoryCut, Role
from engine.curation.budget import Budget, Profile
from engine.curation.common_words import CommonWords
from engine.curation.consent import ConsentChoice, ConsentItem
from engine.curation.index import EntityIndex, TermIndex
from engine.curation.items import Item, ItemState, MemoryRole, id_label
from engine.curation.ledger import LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.pins import DEFAULT_PIN_LIMIT
from engine.curation.result import cost, preview
from engine.curation.scoring import RECURRENCE_TURNS
from engine.debugging.threads import DebugTracker
from engine.entities.registry import EntityRecord, EntityRegistry
from engine.protocols.models import TokenCounter
from engine.standing.book import StandingBook
from engine.summaries.book import SummaryBook
from engine.summaries.offline import PreparedSummaries
from engine.summaries.section import SummarySection
from engine.summaries.story import Story
from engine.summaries.story_book import StoryBook
from engine.summaries.story_earlier import NO_EARLIER, Earlier
from engine.summaries.story_lines import StoryLines
from engine.text.analysis import Analysis, analyse_text, term_counts
from engine.text.thinking import sent_text

if TYPE_CHECKING:  # numpy is imported only when embeddings are on
    from engine.curation.dense import DenseIndex
    from engine.curation.keep_rules import KeepRule

RECENT_TERMS_KEPT = 64
"""How many items' term counts :meth:`CurationState.terms_of` keeps at hand (plans compare the
new message with the last few turns only)."""


@dataclass(eq=False, repr=False)
class CurationState:
    """Everything one session's curation knows; changed only through its owner's methods."""

    counter: TokenCounter
    profile: Profile
    budget: Budget
    summarizer: PreparedSummaries
    summary_section: SummarySection
    policy: ConsentChoice | None = None
    """The user's answer for every consent request of this session ("apply to all"), if given."""
    pin_limit: float = DEFAULT_PIN_LIMIT
    """Share of the budget pins may take before another pin asks first (see engine.curation.pins)."""
    model_summaries: SummaryBook | None = None
    """Summaries a model writes in the background, when one is connected (engine.summaries.book)."""
    story_book: StoryBook | None = None
    """The story's lines a model writes in the background, when one is connected
    (engine.summaries.story_book)."""
    text_source: Callable[[int], str] | None = None
    """Where items' texts can be read again (the store); with one, items not sent verbatim let go
    of theirs (see :meth:`settle_text`)."""

    # --- the items ---
    items: list[Item] = field(default_factory=list)
    by_id: dict[int, Item] = field(default_factory=dict)
    turn: int = 0
    registry: EntityRegistry = field(default_factory=EntityRegistry)
    term_index: TermIndex = field(default_factory=TermIndex)
    """The items' BM25 index."""
    entity_index: EntityIndex = field(default_factory=EntityIndex)
    common_words: CommonWords = field(init=False)
    """Which one-word names the conversation also writes as ordinary words (the registry is told)."""
    debugging: DebugTracker = field(default_factory=DebugTracker)
    """The errors pasted and the debugging threads so far (see :mod:`engine.curation.repeats`)."""
    dense: DenseIndex | None = None
    """The items' vectors, when embeddings are on: relevance then counts closeness in meaning too
    (see :mod:`engine.curation.dense`); None: words alone."""
    fixed: set[int] = field(default_factory=set)
    """Pinned and system items: always sent."""
    all_cost: int = 0
    """What sending every item verbatim would cost (kept as items are added)."""
    recent_terms: dict[int, dict[str, int]] = field(default_factory=dict)
    """Term counts of recently planned-with items (see :meth:`terms_of`), oldest first."""
    cut: HistoryCut | None = None
    """Where a session too long to curate whole was cut: only the messages after it are items."""
    told_earlier: Earlier = NO_EARLIER
    """The messages before the cut that the story tells (engine.summaries.story_earlier): not items."""
    building: BuildProgress | None = None
    """While a long session's curation is still being read (its latest messages first), how far
    it has got: requests meanwhile are planned from the messages read so far."""

    # --- waiting to be saved ---
    pending: list[LedgerEntry] = field(default_factory=list)
    """Ledger entries made while adding items, written with the next applied plan."""
    touched: set[str] = field(default_factory=set)
    """Entity refs mentioned since the last apply: their records (turns) must be saved."""
    unstored: list[tuple[int, Analysis]] = field(default_factory=list)
    """Analyses the store does not have yet (see :meth:`take_unstored`)."""

    # --- the prompt's memory section ---
    memory: str = ""
    """The memory section this session's prompts carry (:mod:`engine.memory.memories`); "" for none."""
    memory_cost: int = 0

    # --- what the last applied plan and the user's actions left ---
    recalled: set[int] = field(default_factory=set)
    """Items the last applied plan recalled (sent verbatim while pruned or summarized)."""
    cold_recalled: set[int] = field(default_factory=set)
    """Messages before the cut that the last applied plan recalled (see engine.curation.cold_recall)."""
    left_out: set[int] = field(default_factory=set)
    """Items the last applied plan left out of its request (waiting for consent, or too big)."""
    restored: set[int] = field(default_factory=set)
    """Items the user restored since the last applied plan: the next request sends them first."""
    prioritized: dict[int, str] = field(default_factory=dict)
    """Items the last applied plan kept on the curator model's advice, with its reason (logged
    when they start being kept, or for another reason, not on every turn)."""
    standing: StandingBook = field(default_factory=StandingBook)
    """Standing instructions the user's messages state, and the user's edits of them."""
    keep_rules: list[KeepRule] = field(default_factory=list)
    """What the user said must survive (``/keep``), oldest first: matching items are retained."""
    kept_by_rule: dict[int, str] = field(default_factory=dict)
    """Items the last applied plan sent because a keep rule matched, with the rule's reason
    (logged when they start being kept, not on every turn)."""
    recall_turns: dict[int, list[int]] = field(default_factory=dict)
    """The turns each item was sent recalled in (the last few), for pin suggestions."""
    consent_items: dict[tuple[int, ConsentChoice], ConsentItem] = field(default_factory=dict)
    """Consent requests by item and proposal, reused while unanswered: a long session that never
    answers is asked about thousands of items every turn."""
    saved_in_session: int = 0
    """Tokens the applied plans of this session have saved, summed over its turns."""

    # --- the story so far (engine.summaries.story) ---
    story: Story = field(init=False)
    story_lines: StoryLines = field(init=False)

    def __post_init__(self) -> None:
        self.common_words = CommonWords(self.term_index, self.entity_index, self.by_id)
        self.story = Story()
        self.story_lines = StoryLines(self.counter.count)

    def analyse(
        self,
        item_id: int,
        role: Role,
        text: str,
        tokens: int,
        *,
        name: str | None = None,
        label: str | None = None,
        analysis: Analysis | None = None,
        digest: bool = False,
    ) -> Item:
        """An item for ``text`` with its entities, terms and role, not yet part of the session.

        Args:
            item_id: The stored message's id.
            role: Who wrote it.
            text: Its content.
            tokens: Its token count.
            name: The speaker's name, when the conversation has named speakers.
            label: How reasons and summaries refer to it (default ``#id``; replay uses transcript ids).
            analysis: What an earlier reading of ``text`` found (stored): spares reading it again.
            digest: An offline model's digest (see ``StoredMessage.is_digest``): its entities are
                not the conversation's ("Press", "13 tokens"), so none are taken from it.
        """
        text = sent_text(role, text)  # a reply's thinking is not part of the conversation
        read = analysis or analyse_text(text, name)
        turn = self.turn + 1 if role == "user" else max(self.turn, 1)
        return Item(
            id=item_id,
            role=role,
            held_text=text,
            tokens=tokens,
            turn=turn,
            position=len(self.items),
            name=name,
            label=label or id_label(item_id),
            mentions=() if digest else read.mentions,
            digest=digest,
            terms=read.terms,
            memory_role=read.memory_role,
            preview=preview(text),
        )

    def mark_saved_entities(self, stored: Iterable[EntityRecord]) -> None:
        """Note as saved the entities the store already holds as they were rebuilt, so the next
        save leaves them out (adding the stored messages again marks every entity they mention)."""
        records = self.registry.records
        for record in stored:
            if records.get(record.ref) == record:
                self.touched.discard(record.ref)

    def add(self, item: Item, *, log: bool = True, stored: bool = False) -> Item:
        """Make ``item`` (from :meth:`analyse`) part of the session: index it and note its entities.

        Args:
            item: The item.
            log: Record its memory-role tag in the ledger (not when rebuilding a stored session).
            stored: Its analysis came from the store; otherwise :meth:`take_unstored` hands it over.
        """
        if item.id in self.by_id:
            raise ValueError(f"item {item.id} is already in the session")
        terms = self.terms_of(item)
        if not stored:
            self.unstored.append((item.id, Analysis(item.mentions, terms, item.memory_role)))
        item.position = len(self.items)
        self.turn = item.turn
        self.items.append(item)
        self.by_id[item.id] = item
        self.all_cost += cost(item.tokens)
        self.term_index.add(item.id, terms)
        if item.held_text is not None and not self.told_earlier.before_cut(item.id):
            self.story.add(
                item.id,
                item.role,
                item.held_text,
                terms,
                label=item.label,
                name=item.name,
                idf=self.story_idf,
            )
        item.terms = None  # the index has them; recent items' are read again (see terms_of)
        self.entity_index.add(item.id, item.refs)
        self.debugging.observe(item.id, item.role, item.text, item.label)
        judged = self.common_words.observe(item, terms.keys())
        for ref in self.registry.observe(item.mentions, item.turn):
            if len(self.registry.records[ref].turns) <= RECURRENCE_TURNS:  # else at its maximum already
                self._recurrence_changed(ref)
        for ref in self.registry.regard(judged) if judged else ():
            self._recurrence_changed(ref)  # taken for a word, or an entity again
        self.touched.update(item.refs)
        if item.role == "system" or item.pinned:
            self.fixed.add(item.id)
        if item.role == "user":
            self.standing.observe(item.id, item.text)
        if log and item.memory_role is not MemoryRole.CONTEXT:
            tag = Operation(
                OpKind.TAG, item.id, "memory role from the text", item.turn, detail=item.memory_role.value
            )
            self.pending.append(LedgerEntry.of(tag))
        return item

    def _recurrence_changed(self, ref: str) -> None:
        """Forget the cached recurrence of the items that mention ``ref``."""
        for other in self.entity_index.items_with(ref):
            cached = self.by_id[other]
            cached.recurrence = cached.prior = None

    def story_idf(self, term: str) -> float:
        """A term's rarity for the story: in the curated messages, and the earlier ones it told (so
        a session told from the store is split into the topics it would be curated whole)."""
        earlier = self.told_earlier.rarity
        if earlier is None:
            return self.term_index.idf(term)
        return earlier.idf(term, len(self.term_index), self.term_index.frequency(term))

    def settle_text(self, item: Item) -> None:
        """After a change of state: an item sent verbatim (active or pinned) holds its text, not
        read from the store on every plan; a summarized or pruned one lets go of it, if it can be
        read again."""
        if item.state is ItemState.ACTIVE or item.pinned:
            if item.held_text is None:
                item.held_text = item.text
        elif self.text_source is not None:
            item.let_go_of_text(self.text_source)

    def item(self, item_id: int) -> Item:
        """The item ``item_id``; a KeyError that says so when the session has none."""
        try:
            return self.by_id[item_id]
        except KeyError:
            raise KeyError(f"no item {item_id} in this session") from None

    def terms_of(self, item: Item) -> dict[str, int]:
        """The item's term counts: its own until it is indexed, then read again from its text
        (holding every item's counts doubled the memory of a long session)."""
        if item.terms is not None:
            return item.terms
        found = self.recent_terms.get(item.id)
        if found is None:
            found = self.recent_terms[item.id] = term_counts(item.text, item.name)
            if len(self.recent_terms) > RECENT_TERMS_KEPT:
                del self.recent_terms[next(iter(self.recent_terms))]
        return found

    def take_unstored(self) -> list[tuple[int, Analysis]]:
        """Analyses of items added since the last call that the store does not have yet."""
        taken, self.unstored = self.unstored, []
        return taken

    def set_memory(self, text: str) -> None:
        """Carry ``text`` as the prompt's memory section from the next plan on ("" for none)."""
        self.memory = text
        self.memory_cost = cost(self.counter.count(text)) if text else 0
