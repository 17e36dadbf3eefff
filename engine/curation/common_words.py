"""Names the conversation also writes as ordinary words ("Substitute", "Art", "Makes"): the extractor,
reading one message, takes a capitalised word that opens a sentence for a name unless the message
writes it in lower case too; the whole conversation tells the rest apart.

A one-word name is taken for a word when at least :data:`MIN_OTHER_USES` messages have its stem
outside any mention (and outside the speaker's name), and at least as many as name it. Counts are
kept only for such names' stems, so the verdicts after each message equal those of reading the
whole conversation at once.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping

from engine.curation.index import EntityIndex, TermIndex
from engine.curation.items import Item
from engine.entities.mentions import EntityKind, Mention
from engine.text.terms import terms

MIN_OTHER_USES = 3
"""Messages using the word outside a name, at the least, before a name is taken for a word: a
heading or a list can hold a name once or twice where the extractor does not take it for one
("**Udemy**: courses")."""


@functools.lru_cache(maxsize=256)  # labels recur; a large cache held a megabyte
def _stems(label: str) -> frozenset[str]:
    return frozenset(terms(label))


def one_word_stem(mention: Mention) -> str | None:
    """The stem of a name of one plain capitalised word ("Substitute", not "TikTok", "API" or
    "New York"), the only names a sentence's opening can make; None for any other mention."""
    label = mention.label
    if mention.kind is not EntityKind.NAME or not label.isalpha() or not label[1:].islower():
        return None
    stems = _stems(label)
    return next(iter(stems)) if len(stems) == 1 else None


def names_stem(item: Item, stem: str, names: str | None = None) -> bool:
    """Whether ``item`` has ``stem`` only as part of a name: one of its mentions or its speaker's
    name, or anywhere in a digest (an offline model's, whose words are not the conversation's).
    ``names``: the item's :func:`names_text`, when the caller asks about several stems."""
    if item.digest:
        return True
    # Stemming changes a word's last letters only: names without the stem's start cannot match.
    head = stem[: len(stem) - 2] if len(stem) > 4 else stem[: max(1, len(stem) - 1)]
    if head not in (names if names is not None else names_text(item)):
        return False
    if item.name is not None and stem in _stems(item.name):
        return True
    return any(head in m.label.casefold() and stem in _stems(m.label) for m in item.mentions)


def names_text(item: Item) -> str:
    """The item's mention labels and speaker's name, case-folded, one a line."""
    labels = [m.label for m in item.mentions]
    if item.name is not None:
        labels.append(item.name)
    return "\n".join(labels).casefold()


class CommonWords:
    """The counts behind the verdicts, for the stems of the session's one-word names.

    Args:
        term_index: The items' term index (how many items have a stem).
        entity_index: The items' entity index (how many items name a ref).
        by_id: The items by id.
    """

    def __init__(self, term_index: TermIndex, entity_index: EntityIndex, by_id: Mapping[int, Item]) -> None:
        self._terms, self._entities, self._by_id = term_index, entity_index, by_id
        self._refs: dict[str, list[str]] = {}
        """Stem -> the one-word name refs with that stem."""
        self._named: dict[str, int] = {}
        """Stem -> the items that have it as part of a name (see :func:`names_stem`)."""

    def observe(self, item: Item, item_terms: Collection[str]) -> dict[str, bool]:
        """Count ``item`` (indexed already, with ``item_terms``); returns whether each name whose
        counts changed is now a word."""
        refs, named = self._refs, self._named
        changed = [stem for stem in item_terms if stem in refs]
        if changed:
            names = names_text(item)
            for stem in changed:
                if names_stem(item, stem, names):
                    named[stem] += 1
        for mention in item.mentions:
            name = one_word_stem(mention)
            if name is None:
                continue
            known = refs.get(name)
            if known is None:
                # A stem met as a name for the first time: count the items so far, this one too.
                refs[name] = [mention.ref]
                by_id = self._by_id
                named[name] = sum(names_stem(by_id[doc], name) for doc in self._terms.documents_with(name))
            elif mention.ref not in known:
                known.append(mention.ref)
            changed.append(name)  # how many items name it changed
        return dict(self._judge(changed))

    def _judge(self, stems: Iterable[str]) -> Iterable[tuple[str, bool]]:
        for stem in stems:
            other = self._terms.frequency(stem) - self._named[stem]
            for ref in self._refs[stem]:
                yield ref, other >= max(MIN_OTHER_USES, len(self._entities.items_with(ref)))
