"""The prompt's summary section: one system message with a line per summarized item that fits."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from engine.curation.items import Item
from engine.curation.result import ContextMessage, cost
from engine.curation.scoring import ScoreTable
from engine.protocols.models import TokenCounter

SUMMARY_HEADER = "Summary of earlier messages (made by Heedful; each line names its source):"


class SummarySection:
    """Builds the section, best-scoring summaries first, in conversation order; caches line counts."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._costs: dict[int, tuple[str, int]] = {}
        """Item id → (summary, its line's tokens); a changed summary is counted again. The lines
        themselves are made again for those that fit (a few dozen), not kept for every summarized
        item of a long session."""

    def build(
        self,
        summarized: Sequence[Item],
        new_summaries: Mapping[int, str],
        scores: ScoreTable,
        room: int,
        *,
        first: frozenset[int],
    ) -> ContextMessage | None:
        """The section for ``summarized`` items (those not sent verbatim), within ``room`` tokens;
        the ``first`` (recent, so unscored) take their room before the rest."""
        if not summarized:
            return None
        header_cost = cost(self.counter.count(SUMMARY_HEADER))
        room -= header_cost
        lines: list[tuple[int, str, int, int]] = []
        totals, costs = scores.total, self._costs
        # Best first, in conversation order among equals (a stable sort); keyed by a list's
        # __getitem__, not a lambda, and costs looked up inline: a long session has ~10,000
        # summarized items, and this runs every turn.
        keys = [-totals[i.id] if i.id not in first else -math.inf for i in summarized]
        for n in sorted(range(len(keys)), key=keys.__getitem__):
            item = summarized[n]
            text = new_summaries.get(item.id) or item.summary or ""
            if not text:
                continue
            found = costs.get(item.id)
            if found is None or found[0] != text:
                found = costs[item.id] = (text, self.counter.count(_line(item, text)) + 1)
            if found[1] <= room:
                lines.append((item.position, _line(item, text), found[1], item.id))
                room -= found[1]
        if not lines:
            return None
        lines.sort()
        content = "\n".join([SUMMARY_HEADER, *(line for _, line, _, _ in lines)])
        tokens = header_cost + sum(tokens for _, _, tokens, _ in lines)
        sources = tuple(item_id for _, _, _, item_id in lines)
        return ContextMessage("system", content, sources, "summary", tokens)


def _line(item: Item, summary: str) -> str:
    """The section's line for ``item``; its tokens are counted +1 for the newline that joins them."""
    return f"- {item.name or item.role} ({item.label}): {summary}"
