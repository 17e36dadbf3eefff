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
        for item in sorted(summarized, key=lambda i: -scores.total[i.id]):
            text = new_summaries.get(item.id) or item.summary or ""
            if not text:
                continue
            line, tokens = self._line(item, text)
            if tokens <= room:
                lines.append((item.position, line, tokens, item.id))
                room -= tokens
        if not lines:
            return None
        lines.sort()
        content = "\n".join([SUMMARY_HEADER, *(line for _, line, _, _ in lines)])
        tokens = header_cost + sum(tokens for _, _, tokens, _ in lines)
        sources = tuple(item_id for _, _, _, item_id in lines)
        return ContextMessage("system", content, sources, "summary", tokens)

    def _line(self, item: Item, summary: str) -> tuple[str, int]:
        """The line for ``item``, and its tokens (+1 for the newline that joins the lines)."""
        cached = self._lines.get(item.id)
        if cached is None or cached[0] != summary:
            line = f"- {item.name or item.role} ({item.label}): {summary}"
            cached = self._lines[item.id] = (summary, line, self.counter.count(line) + 1)
        return cached[1], cached[2]
