"""The prompt's summary section: one system message with a line per summarized item that fits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.curation_result import ContextMessage, cost
from engine.items import Item
from engine.protocols import TokenCounter
from engine.scoring import ScoreTable

SUMMARY_HEADER = "Summary of earlier messages (made by Heedful; each line names its source):"


class SummarySection:
    """Builds the section, best-scoring summaries first, in conversation order; caches line counts."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._lines: dict[int, tuple[str, str, int]] = {}
        """Item id → (summary, its line, the line's tokens); a changed summary is counted again."""

    def build(
        self,
        summarized: Sequence[Item],
        new_summaries: Mapping[int, str],
        scores: ScoreTable,
        room: int,
    ) -> ContextMessage | None:
        """The section for ``summarized`` items (those not sent verbatim), within ``room`` tokens."""
        if not summarized:
            return None
        header_cost = cost(self.counter.count(SUMMARY_HEADER))
        room -= header_cost
        lines: list[tuple[int, str, int, int]] = []
        totals, cached = scores.total, self._lines
        # Best first, in conversation order among equals (a stable sort); keyed by a list's
        # __getitem__, not a lambda, and lines looked up inline: a long session has ~10,000
        # summarized items, and this runs every turn.
        keys = [-totals[i.id] for i in summarized]
        for n in sorted(range(len(keys)), key=keys.__getitem__):
            item = summarized[n]
            text = new_summaries.get(item.id) or item.summary or ""
            if not text:
                continue
            found = cached.get(item.id)
            if found is None or found[0] != text:
                found = self._line(item, text)
            if found[2] <= room:
                lines.append((item.position, found[1], found[2], item.id))
                room -= found[2]
        if not lines:
            return None
        lines.sort()
        content = "\n".join([SUMMARY_HEADER, *(line for _, line, _, _ in lines)])
        tokens = header_cost + sum(tokens for _, _, tokens, _ in lines)
        sources = tuple(item_id for _, _, _, item_id in lines)
        return ContextMessage("system", content, sources, "summary", tokens)

    def _line(self, item: Item, summary: str) -> tuple[str, str, int]:
        """The line for ``item`` (with its summary first, as cached), and its tokens (+1 for the
        newline that joins the lines)."""
        line = f"- {item.name or item.role} ({item.label}): {summary}"
        found = self._lines[item.id] = (summary, line, self.counter.count(line) + 1)
        return found
