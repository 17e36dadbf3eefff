"""What the curator model is shown each turn (:class:`engine.advice.advice.CuratorBrief`).

Bounded whatever the session's size: the new message, the last few turns with their entities, a
handful of older messages that share its entities, the most recently mentioned entities, and the
curator's own last decisions.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from engine.advice.advice import (
    DECISIONS_SHOWN,
    ENTITIES_SHOWN,
    RECENT_TURNS_SHOWN,
    BriefEntity,
    BriefMessage,
    CuratorBrief,
)
from engine.curation.items import Item
from engine.curation.session_curation import SessionCuration
from engine.entities.registry import EntityRecord

MESSAGE_CHARS = 400
"""Each message's text is cut to this: the curator decides what to keep, it does not answer."""
RECENT_MESSAGES = 10
OLDER_SHOWN = 12


def brief_for(curation: SessionCuration, new: Item, decisions: Sequence[str]) -> CuratorBrief:
    """The brief for planning ``new`` (the session's newest user message)."""
    floor = new.turn - RECENT_TURNS_SHOWN
    recent: list[Item] = []
    for item in reversed(curation.items):
        if item.turn < floor or len(recent) >= RECENT_MESSAGES:
            break
        if item is not new:
            recent.append(item)
    recent.reverse()
    shown = {i.id for i in recent} | {new.id}
    older: dict[int, Item] = {}
    words = curation.registry.words
    for ref in new.refs - words:
        for item_id in sorted(curation.items_mentioning(ref), reverse=True):
            item = curation.by_id[item_id]
            if item_id not in shown and item.turn < floor and not item.forgotten:
                older.setdefault(item_id, item)
            if len(older) >= OLDER_SHOWN:
                break
    entities = [r for r in curation.registry.records.values() if r.ref not in words]
    records = latest_records(entities, ENTITIES_SHOWN)
    return CuratorBrief(
        new_message=_message(new),
        recent=tuple(_message(i) for i in recent),
        older=tuple(_message(i) for i in sorted(older.values(), key=lambda i: i.position)),
        entities=tuple(
            BriefEntity(r.ref, r.label, r.state.value if r.state else "new", r.last_turn) for r in records
        ),
        decisions=tuple(decisions[-DECISIONS_SHOWN:]),
        turn=new.turn,
    )


def latest_records(records: list[EntityRecord], count: int) -> list[EntityRecord]:
    """The ``count`` records mentioned last, the first of equals first: as sorting them all by
    their last turn would give, without a Python call per record (a long session has thousands)."""
    try:
        latest = list(map(_LATEST, map(_TURNS, records)))
    except IndexError:  # a record never mentioned (its last turn is 0)
        latest = [r.last_turn for r in records]
    # Sorted in C, keyed by a list's __getitem__; a reversed sort keeps equals in order.
    return [records[n] for n in sorted(range(len(latest)), key=latest.__getitem__, reverse=True)[:count]]


_TURNS = operator.attrgetter("turns")
_LATEST = operator.itemgetter(-1)


def _message(item: Item) -> BriefMessage:
    text = item.text if len(item.text) <= MESSAGE_CHARS else item.text[: MESSAGE_CHARS - 1] + "…"
    return BriefMessage(
        ref=f"#{item.id}",
        role=item.role,
        text=text,
        entities=tuple(dict.fromkeys(m.ref for m in item.mentions)),
        turn=item.turn,
        state=item.state.value,
        pinned=item.pinned,
    )
