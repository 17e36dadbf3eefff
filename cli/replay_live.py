"""``heedful replay --base-url URL --model NAME``: a live model writes summaries and advises curation.

Without the flags replay stays offline and deterministic. With them, each user message (and each
probe) is first shown to the curator model, and after each plan the summaries it wants are written
by the model before the next message, so a replay is repeatable against a repeatable server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from engine.advice.brief import brief_for
from engine.advice.calls import NO_USAGE, CallUsage
from engine.advice.rules import Guidance
from engine.curation.items import Item
from engine.curation.session_curation import SessionCuration
from engine.curation.stored import save
from engine.protocols.models import CuratorModel, ModelSummarizer, TokenCounter
from engine.protocols.store import ChatStore
from engine.summaries.book import SummaryBook
from engine.summaries.model import StoredSummary, SummaryLevel


@dataclass
class LiveCuration:
    """The curator and summarizer of one replay, and what their calls cost."""

    curator: CuratorModel
    summarizer: ModelSummarizer
    model: str
    usage: CallUsage = NO_USAGE
    decisions: list[str] = field(default_factory=list)
    fallbacks: int = 0
    """Turns on which the curator gave no advice."""
    summaries: int = 0
    failed_summaries: int = 0

    @classmethod
    def connect(cls, base_url: str, model: str, counter: TokenCounter, window: int) -> LiveCuration:
        from providers.client_factory import client_factory
        from providers.openai_curator import OpenAICurator
        from providers.openai_summarizer import OpenAISummarizer

        clients = client_factory(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") or None)
        return cls(
            OpenAICurator(clients, model),
            OpenAISummarizer(clients, model, counter=counter, window=window),
            model,
        )

    def attach(self, curation: SessionCuration, level: SummaryLevel) -> None:
        curation.state.model_summaries = SummaryBook(level)

    async def advise(self, curation: SessionCuration, new: Item) -> Guidance | None:
        """The curator's checked advice for ``new``; None when the conversation fits the budget
        whole (the app does not ask then either)."""
        if curation.fits_verbatim(new):
            return None
        outcome = await self.curator.advise(brief_for(curation, new, self.decisions))
        self.usage += outcome.usage
        guidance = curation.judge(outcome, new)
        self.fallbacks += outcome.advice is None
        return guidance

    def note(self, guidance: Guidance, turn: int) -> None:
        """The advice was used for a turn that happened (not a probe): the curator's log has it."""
        self.decisions.append(f"turn {turn}: {guidance.note}")

    async def write_summaries(self, curation: SessionCuration, store: ChatStore, session_id: int) -> None:
        book = curation.model_summaries
        if book is None:
            return
        for request in book.take_wanted():
            outcome = await self.summarizer.summarize(request)
            self.usage += outcome.usage
            if outcome.text is None:
                self.failed_summaries += 1
                book.failed(request)
                continue
            self.summaries += 1
            stored = StoredSummary(
                request.source_id, request.level, request.hash, outcome.text, outcome.model or self.model
            )
            store.save_summary(stored)
            save(store, session_id, curation, curation.adopt_summary(stored, stored.model))

    def report(self) -> dict[str, object]:
        return {
            "model": self.model,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "calls": self.usage.calls,
            "curator_fallbacks": self.fallbacks,
            "summaries_written": self.summaries,
            "summaries_failed": self.failed_summaries,
        }
