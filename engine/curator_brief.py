"""What the curator model is shown each turn (:class:`engine.curator_advice.CuratorBrief`).

Bounded whatever the session's size: the new message, the last few turns with their entities, a
handful of older messages that share its entities, the most recently mentioned entities, and the
curator's own last decisions.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.curator import SessionCuration
from engine.curator_advice import (
    DECISIONS_SHOWN,
    ENTITIES_SHOWN,
    RECENT_TURNS_SHOWN,
    BriefEntity,
    BriefMessage,
    CuratorBrief,
)
from engine.items import Item

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
    for ref in new.refs:
        for item_id in sorted(curation.items_mentioning(ref), reverse=True):
            item = curation.by_id[item_id]
            if item_id not in shown and item.turn < floor and not item.forgotten:
                older.setdefault(item_id, item)
            if len(older) >= OLDER_SHOWN:
                break
    records = sorted(curation.registry.records.values(), key=lambda r: -r.last_turn)[:ENTITIES_SHOWN]
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
