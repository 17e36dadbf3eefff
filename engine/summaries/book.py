"""A session's model summaries: those written, and those wanted but not written yet.

The planner asks :meth:`SummaryBook.ready` when it wants to summarize an item. A written summary
of the item's current text is returned; otherwise the item is noted as wanted (for the background
summary service) and None tells the planner to leave the item as it is for now. An item whose
summary the model could not write falls back to the offline extractive summary, so a failing
model delays forgetting by a turn, never forever. An item too short for a model's summary to
pay for its call (:data:`~engine.summaries.model.MODEL_SUMMARY_FROM_TOKENS`) gets the offline one
at once.
"""

from __future__ import annotations

from engine.curation.items import Item
from engine.summaries.model import (
    MODEL_SUMMARY_FROM_TOKENS,
    StoredSummary,
    SummaryLevel,
    SummaryRequest,
    source_hash,
)
from engine.summaries.offline import ExtractiveSummarizer, Summarizer

STAND_INS_KEPT = 1_000
"""Stand-ins kept made (see :meth:`SummaryBook.stand_in`); past it they are made again."""


class SummaryBook:
    def __init__(self, level: SummaryLevel, *, fallback: Summarizer | None = None) -> None:
        self.level = level
        self.fallback = fallback or ExtractiveSummarizer()
        """Stands in while a model summary is on its way, and replaces one the model could not write."""
        self._written: dict[int, StoredSummary] = {}
        self._wanted: dict[int, SummaryRequest] = {}
        self._asked: set[int] = set()
        """Items handed to the service and not answered yet: not asked for twice."""
        self._failed: dict[int, str] = {}
        """Item id → hash of the text the model could not summarize."""
        self._stand_ins: dict[int, tuple[str, tuple[object, ...], str]] = {}
        """Item id → (the text, the mentions it was made from, the stand-in): every plan until
        the model's summary arrives carries the same one (dozens a plan in a long session)."""

    def load(self, summaries: list[StoredSummary]) -> None:
        """Take the summaries the store kept (of this book's level)."""
        for summary in summaries:
            if summary.level is self.level:
                self._written[summary.message_id] = summary

    def written(self, item: Item) -> str | None:
        """The model's summary of the item's current text, if there is one."""
        found = self._written.get(item.id)
        if found is not None and found.source_hash == source_hash(item.text):
            return found.text
        return None

    def ready(self, item: Item) -> str | None:
        """A summary to replace ``item`` with now, or None: one is asked for, leave the item be."""
        found = self.written(item)
        if found is not None:
            return found
        if item.tokens < MODEL_SUMMARY_FROM_TOKENS or self._failed.get(item.id) == source_hash(item.text):
            return self.fallback.summarize(item)
        self.want(item)
        return None

    def now(self, item: Item) -> str:
        """A summary at once (the user asked for it): the model's if written, else the extractive
        one, and the model's is asked for to take its place later."""
        found = self.written(item)
        if found is not None:
            return found
        self.want(item)
        return self.fallback.summarize(item)

    def stand_in(self, item: Item) -> str:
        """What the prompt carries for an item while its model summary is being written."""
        text = item.held_text
        found = self._stand_ins.get(item.id)
        if found is not None and found[0] is text and found[1] == item.mentions:
            return found[2]
        summary = self.fallback.summarize(item)
        if text is not None:
            if len(self._stand_ins) >= STAND_INS_KEPT:
                self._stand_ins.clear()
            self._stand_ins[item.id] = (text, item.mentions, summary)
        return summary

    def want(self, item: Item) -> None:
        if item.id in self._asked or item.id in self._wanted or item.tokens < MODEL_SUMMARY_FROM_TOKENS:
            return
        self._wanted[item.id] = SummaryRequest(
            source_id=item.id,
            label=item.label,
            role=item.role,
            text=item.text,
            tokens=item.tokens,
            entities=tuple(dict.fromkeys(m.label for m in item.mentions)),
            level=self.level,
            name=item.name,
        )

    def is_waiting(self, item_id: int) -> bool:
        return item_id in self._wanted or item_id in self._asked

    def take_wanted(self) -> list[SummaryRequest]:
        """The summaries wanted since the last call (they count as asked until answered)."""
        taken = list(self._wanted.values())
        self._wanted.clear()
        self._asked.update(r.source_id for r in taken)
        return taken

    def add(self, summary: StoredSummary) -> None:
        """A summary the model wrote."""
        self._asked.discard(summary.message_id)
        self._failed.pop(summary.message_id, None)
        self._written[summary.message_id] = summary

    def failed(self, request: SummaryRequest) -> None:
        """The model could not summarize ``request``: the extractive summary will do for that text."""
        self._asked.discard(request.source_id)
        self._failed[request.source_id] = request.hash

    def returned(self, requests: list[SummaryRequest]) -> None:
        """Requests taken but not attempted (the service stopped): wanted again."""
        for request in requests:
            self._asked.discard(request.source_id)
            self._wanted.setdefault(request.source_id, request)
