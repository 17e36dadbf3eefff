"""Stored message analyses as compact JSON, and a session's stored analyses read one at a time.

The store's analyses part (:mod:`sessions.analysis_records`) imports this when it first reads or
writes one: the first frame reads messages only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from engine.curation.items import MemoryRole
from engine.entities.mentions import EntityKind, Mention
from engine.text.analysis import Analysis

T = TypeVar("T")


def encode(analysis: Analysis) -> str:
    mentions = [[m.kind.value, m.label, m.ref] for m in analysis.mentions]
    return json.dumps(
        {"m": mentions, "t": analysis.terms, "r": analysis.memory_role.value},
        ensure_ascii=False,
        separators=(",", ":"),
    )


_KINDS = {kind.value: kind for kind in EntityKind}
_ROLES = {role.value: role for role in MemoryRole}
# Enum(value) costs a function call and more: a 10,000-message session decodes ~120k of these.

MENTIONS_KEPT = 50_000
_mentions: dict[tuple[str, str, str], Mention] = {}
"""Mentions already decoded, shared (they are frozen): the same entities recur across thousands of
messages, and making a frozen dataclass per occurrence was most of decoding. Cleared when full.
Keyed by the mention's own interned strings: the decoded ones are copies, one per occurrence."""


def _mention(kind: str, label: str, ref: str) -> Mention:
    key = (kind, label, ref)
    found = _mentions.get(key)
    if found is None:
        if len(_mentions) >= MENTIONS_KEPT:
            _mentions.clear()
        found = Mention(_KINDS[kind], sys.intern(label), sys.intern(ref))
        _mentions[found.kind.value, found.label, found.ref] = found
    return found


def decode(text: str) -> Analysis | None:
    """The analysis in ``text``, or None if it cannot be read (it is then made again)."""
    try:
        data = json.loads(text)
        mentions = tuple(_mention(kind, label, ref) for kind, label, ref in data["m"])
        terms = data["t"]
        if not isinstance(terms, dict):
            return None
        return Analysis(mentions, terms, _ROLES[data["r"]])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def decode_terms(text: str) -> dict[str, int] | None:
    """Only the term counts of the analysis in ``text`` (its mentions are not made: the story
    before a long session's cut reads thousands it does not need), or None if unreadable."""
    try:
        terms = json.loads(text)["t"]
    except (ValueError, KeyError, TypeError):
        return None
    return terms if isinstance(terms, dict) else None


class StoredAnalyses(Mapping[int, T]):
    """A session's stored analyses (or their term counts), each read from its JSON when asked for:
    the engine takes them one message at a time, so the decoded forms of 10,000 messages never
    all exist at once.

    Iteration and ``len`` count the rows as stored; a row that cannot be read is not ``in`` it.
    """

    def __init__(self, rows: dict[int, str], read: Callable[[str], T | None]) -> None:
        self._rows = rows
        self._read = read

    def __getitem__(self, message_id: int) -> T:
        found = self._read(self._rows[message_id])
        if found is None:
            raise KeyError(message_id)
        return found

    def get(self, message_id: int, default: T | None = None) -> T | None:  # type: ignore[override]
        text = self._rows.get(message_id)
        found = self._read(text) if text is not None else None
        return found if found is not None else default

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
