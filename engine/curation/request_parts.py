"""What a request's tokens are made of, part by part (system, memory, standing, story, summaries,
pinned, recalled, recent, older), for the panel's picture of the request."""

from __future__ import annotations

from engine.curation.context_view import ItemView, Mark, Part, RequestPart, Section
from engine.curation.prompt import REPLY_PRIMING_TOKENS
from engine.curation.result import CurationResult

_PART_OF_MARK = {Mark.PINNED: Part.PINNED, Mark.RECALLED: Part.RECALLED}
_PART_OF_FORM = {
    "memory": Part.MEMORY,
    "summary": Part.SUMMARIES,
    "story": Part.STORY,
    "standing": Part.STANDING,
    "system": Part.SYSTEM,
}


def request_parts(result: CurationResult, items: tuple[ItemView, ...]) -> tuple[RequestPart, ...]:
    """What the request's tokens are made of, in prompt order; they add up to ``result.tokens``
    (the reply's framing tokens count as system)."""
    by_id = {i.id: i for i in items}
    tokens = dict.fromkeys(Part, 0)
    counts = dict.fromkeys(Part, 0)
    tokens[Part.SYSTEM] = REPLY_PRIMING_TOKENS
    for message in result.messages:
        part = _PART_OF_FORM.get(message.form)
        if part is None:
            view = by_id.get(message.sources[0]) if message.sources else None
            if view is None:
                part = Part.RECENT  # the new message of a draft, not in the session yet
            elif view.mark in _PART_OF_MARK:
                part = _PART_OF_MARK[view.mark]
            else:
                part = Part.RECENT if view.section is Section.ACTIVE else Part.OLDER
        tokens[part] += message.tokens
        counts[part] += len(message.sources)
    tokens[Part.SYSTEM] += result.tokens - sum(tokens.values())  # nothing uncounted, whatever changes
    return tuple(RequestPart(p, tokens[p], counts[p]) for p in Part if tokens[p] > 0)
