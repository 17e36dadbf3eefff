"""A session's items as the curation engine reads them: in conversation order, analysed, indexed.

The base of :class:`engine.curation.session_curation.SessionCuration`: adding a message reads its
entities, terms and memory role (or takes them from the store), indexes them, and notes its entities in the
registry. Planning and the user's actions build on this state; nothing here decides what is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.chat import Role
from engine.curation.index import EntityIndex, TermIndex
from engine.curation.items import Item, ItemState, MemoryRole
from engine.curation.ledger import LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.result import cost, preview
from engine.curation.scoring import RECURRENCE_TURNS
from engine.entities.registry import EntityRecord, EntityRegistry
from engine.protocols.models import TokenCounter
from engine.text.analysis import Analysis, analyse_text, term_counts
from engine.text.thinking import sent_text

RECENT_TERMS_KEPT = 64
"""How many items' term counts :meth:`SessionItems.terms_of` keeps at hand (plans compare the
new message with the last few turns only)."""


class SessionItems:
    """One session's items, their indexes and its entity registry."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.items: list[Item] = []
        self.by_id: dict[int, Item] = {}
        self.turn = 0
        self.registry = EntityRegistry()
        self._terms = TermIndex()
        self._entities = EntityIndex()
        self._pending: list[LedgerEntry] = []
        """Ledger entries made while adding items, written with the next applied plan."""
        self._touched: set[str] = set()
        """Entity refs mentioned since the last apply: their records (turns) must be saved."""
        self._all_cost = 0
        """What sending every item verbatim would cost (kept as items are added)."""
        self._fixed: set[int] = set()
        """Pinned and system items: always sent."""
        self._unstored: list[tuple[int, Analysis]] = []
        self._recent_terms: dict[int, dict[str, int]] = {}
        """Term counts of recently planned-with items (see :meth:`terms_of`), oldest first."""
        self.text_source: Callable[[int], str] | None = None
        """Where items' texts can be read again (the store); with one, items not sent verbatim
        let go of theirs (see :meth:`settle_text`)."""

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
            label=label or f"#{item_id}",
            mentions=() if digest else read.mentions,
            terms=read.terms,
            memory_role=read.memory_role,
            preview=preview(text),
        )

    def mark_saved_entities(self, stored: Iterable[EntityRecord]) -> None:
        """Note as saved the entities the store already holds as they were rebuilt, so the next
        save leaves them out.

        Adding the stored messages again marks every entity they mention for saving; a long
        session's first turn then wrote all of them to change a few.
        """
        records = self.registry.records
        for record in stored:
            if records.get(record.ref) == record:
                self._touched.discard(record.ref)

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
            self._unstored.append((item.id, Analysis(item.mentions, terms, item.memory_role)))
        item.position = len(self.items)
        self.turn = item.turn
        self.items.append(item)
        self.by_id[item.id] = item
        self._all_cost += cost(item.tokens)
        self._terms.add(item.id, terms)
        item.terms = None  # the index has them; recent items' are read again (see terms_of)
        self._entities.add(item.id, item.refs)
        for ref in self.registry.observe(item.mentions, item.turn):
            if len(self.registry.records[ref].turns) > RECURRENCE_TURNS:
                continue  # recurrence is already at its maximum for this entity
            for other in self._entities.items_with(ref):
                cached = self.by_id[other]
                cached.recurrence = cached.prior = None
        self._touched.update(item.refs)
        if item.role == "system" or item.pinned:
            self._fixed.add(item.id)
        if log and item.memory_role is not MemoryRole.CONTEXT:
            tag = Operation(
                OpKind.TAG, item.id, "memory role from the text", item.turn, detail=item.memory_role.value
            )
            self._pending.append(LedgerEntry.of(tag))
        return item

    def settle_text(self, item: Item) -> None:
        """After a change of state: an item sent verbatim (active or pinned) holds its text, not
        read from the store on every plan; a summarized or pruned one lets go of it, if it can be
        read again."""
        if item.state is ItemState.ACTIVE or item.pinned:
            if item.held_text is None:
                item.held_text = item.text
        elif self.text_source is not None:
            item.let_go_of_text(self.text_source)

    @property
    def term_index(self) -> TermIndex:
        """The items' BM25 index (read, never changed, from outside)."""
        return self._terms

    def items_mentioning(self, ref: str) -> Iterable[int]:
        """Ids of the items that mention the entity ``ref``."""
        return self._entities.items_with(ref)

    def terms_of(self, item: Item) -> dict[str, int]:
        """The item's term counts: its own until it is indexed, then read again from its text.

        Holding every item's counts doubled the memory of a long session (a million entries at
        10,000 messages) for the sake of the few recent items a plan compares with.
        """
        if item.terms is not None:
            return item.terms
        found = self._recent_terms.get(item.id)
        if found is None:
            found = self._recent_terms[item.id] = term_counts(item.text, item.name)
            if len(self._recent_terms) > RECENT_TERMS_KEPT:
                del self._recent_terms[next(iter(self._recent_terms))]
        return found

    def take_unstored(self) -> list[tuple[int, Analysis]]:
        """Analyses of items added since the last call that the store does not have yet."""
        taken, self._unstored = self._unstored, []
        return taken

    def add_message(
        self,
        item_id: int,
        role: Role,
        text: str,
        tokens: int,
        *,
        name: str | None = None,
        label: str | None = None,
        digest: bool = False,
    ) -> Item:
        """:meth:`analyse` then :meth:`add`."""
        return self.add(self.analyse(item_id, role, text, tokens, name=name, label=label, digest=digest))
