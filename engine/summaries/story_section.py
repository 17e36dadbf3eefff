"""The prompt's story section for one plan: the story so far, leaving out what the request sends whole
(:mod:`engine.summaries.story_lines` renders it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.curation.items import Item, id_label
from engine.curation.prompt import MESSAGE_OVERHEAD_TOKENS
from engine.curation.result import ContextMessage, cost
from engine.summaries.story import Segment
from engine.summaries.story_earlier import Earlier
from engine.summaries.story_lines import STORY_HEADER
from engine.summaries.story_session import session_line, session_request

if TYPE_CHECKING:
    from engine.curation.curation_state import CurationState
    from engine.curation.plan_draft import PlanDraft


def story_section(
    state: CurationState, draft: PlanDraft, room: int
) -> tuple[ContextMessage | None, tuple[tuple[tuple[int, ...], str], ...]]:
    """The story so far within ``room`` tokens, leaving out the messages this request sends whole."""
    sent = _Unquoted(draft.chosen, draft.excluded, set(draft.left_out), state.by_id, state.told_earlier)
    room -= MESSAGE_OVERHEAD_TOKENS
    book = state.story_book
    written = None
    if book is not None:

        def written(segment: Segment) -> tuple[tuple[int, ...], str] | None:
            found = book.line(segment)
            if found is None or any(sent.withheld(source) for source in found[0]):
                return None  # it would tell of a message the user took out, or not yet sent
            return found

    parts = state.story_lines.told(state.story, sent.as_set(), written)
    extractive = head = session_line([(len(part.unsent), part.top) for part in parts])
    model = book.session if book is not None else None
    if head is not None and model is not None and not any(sent.withheld(s) for s in model.sources):
        head = (model.sources, " ".join(model.text.split()))
    if head is not None:
        head = (head[0], f"- [{', '.join(sent.label(i) for i in head[0])}] {head[1]}")
    lines = state.story_lines.render(parts, room, head)
    if book is not None:
        for segment in state.story_lines.detailed:
            book.want(segment)
        segment_lines = [line.text for line in lines if head is None or line.text != head[1]]
        if extractive is not None and segment_lines:
            wanted = session_request(state.story, book.session, segment_lines, extractive[0])
            if wanted is not None:
                book.want_session(wanted)
    if not lines:
        return None, ()
    content = "\n".join([STORY_HEADER, *(line.text for line in lines)])
    tokens = cost(state.story_lines.header_tokens() + sum(line.tokens for line in lines))
    sources = tuple(dict.fromkeys(s for line in lines for s in line.sources))
    told = tuple((line.sources, line.text) for line in lines)
    return ContextMessage("system", content, sources, "story", tokens), told


class _Unquoted:
    """The messages the story leaves out: those sent whole, those left out of this request (a
    message of the user's waiting for their answer is not sent in any form until they give it),
    and those the user took out (never quoted again until restored)."""

    __slots__ = ("by_id", "chosen", "earlier", "excluded", "left_out")

    def __init__(
        self,
        chosen: set[int],
        excluded: set[int],
        left_out: set[int],
        by_id: dict[int, Item],
        earlier: Earlier,
    ) -> None:
        self.chosen, self.excluded, self.left_out, self.by_id = chosen, excluded, left_out, by_id
        self.earlier = earlier
        """The messages before the cut the story tells (none of them taken out)."""

    def withheld(self, item_id: int) -> bool:
        """Not to be told of in any form (sent whole is not withheld: a model's line of a segment may
        name such a message beside the others)."""
        if item_id in self.excluded or item_id in self.left_out:
            return True
        item = self.by_id.get(item_id)
        return item.forgotten if item is not None else item_id not in self.earlier

    def label(self, item_id: int) -> str:
        """How the story names the message (a message before the cut: by its id)."""
        item = self.by_id.get(item_id)
        return item.label if item is not None else id_label(item_id)

    def as_set(self) -> frozenset[int]:
        """The messages left out, as one set for walking the whole story: those sent whole, left out
        or withheld (every message the story holds is one of ``by_id``'s or one before the cut
        told by it, never taken out: none is missing)."""
        forgotten = [item_id for item_id, item in self.by_id.items() if item.forgotten]
        return frozenset().union(self.chosen, self.excluded, self.left_out, forgotten)
