"""The story so far reads further back than the curated messages: a long session's story tells its
latest :data:`STORY_LIMIT` messages, the curated ones and, before them, those read from the store
(their texts and stored term counts), so a smaller curated part does not shorten the story."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from engine.chat import Role
from engine.curation.index import bm25_idf
from engine.curation.items import id_label
from engine.summaries.story import Story

STORY_LIMIT = 5_000
"""The most messages of a session the story tells: its latest, curated or not (its fragments are
held in memory: docs/performance.md has what this many cost)."""


class Rarity:
    """How many of the messages read so far have each term: the story's weights of rarity for the
    messages before the curated ones (whose index has none of them), as that index weighs them."""

    __slots__ = ("documents", "frequency")

    def __init__(self) -> None:
        self.documents = 0
        self.frequency: dict[str, int] = {}

    def add(self, terms: Iterable[str]) -> None:
        self.documents += 1
        for found in terms:
            self.frequency[found] = self.frequency.get(found, 0) + 1

    def idf(self, term: str, documents: int = 0, frequency: int = 0) -> float:
        """``term``'s rarity in the messages read and ``documents`` more, ``frequency`` of which
        have it (the curated ones after them: the weight one index of all would give)."""
        return bm25_idf(self.documents + documents, self.frequency.get(term, 0) + frequency)


@dataclass(frozen=True, slots=True)
class Earlier:
    """The messages before the cut the story reads: ids in (:attr:`after`, :attr:`upto`] but those
    the user took out (a range, not a set of thousands; those out of the conversation are never
    named by the story)."""

    after: int = 0
    upto: int = 0
    forgotten: frozenset[int] = frozenset()
    rarity: Rarity | None = field(default=None, compare=False, repr=False)
    """The term counts of those the story read (:func:`tell_earlier`), which the curated messages'
    story goes on from (:meth:`Rarity.idf`)."""

    @property
    def told(self) -> int:
        """How many the story read."""
        return self.rarity.documents if self.rarity is not None else 0

    def __contains__(self, item_id: object) -> bool:
        return (
            isinstance(item_id, int) and self.after < item_id <= self.upto and item_id not in self.forgotten
        )

    def __bool__(self) -> bool:
        return self.upto > self.after

    def before_cut(self, item_id: int) -> bool:
        """The message is one of those before the cut that the story has read, or one older that
        it does not tell (a message pinned long ago): a curated item's story is not added again."""
        return bool(self) and item_id <= self.upto


NO_EARLIER = Earlier()
"""No message before the cut told (a session curated whole, or its first part read)."""


Told = tuple[int, Role, str, Mapping[str, int]]
"""A message the story reads: its id, role, text as sent and term counts."""


def tell_earlier(story: Story, earlier: Earlier, messages: Iterable[Told]) -> Earlier:
    """Add to ``story`` the messages before the curated ones, oldest first, before any curated
    one; ``earlier`` with their term counts."""
    rarity = Rarity()
    for item_id, role, text, terms in messages:
        rarity.add(terms)
        story.add(item_id, role, text, terms, label=id_label(item_id), idf=rarity.idf)
    return replace(earlier, rarity=rarity)
