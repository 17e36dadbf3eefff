"""Writes the summaries that curations want, with a model, away from the turn.

A plan that wants a model's summary leaves the item as it is (:mod:`engine.summary_book`); after
the turn the app runs :meth:`SummaryService.run` in the background. Each summary is stored as it
arrives (it survives a restart; a changed message drops it) and handed to the session's curation,
which uses it from its next plan on. Typing and sending never wait for it: the curation's lock is
held only to take the requests and to hand each summary over.
"""

from __future__ import annotations

import asyncio

from engine.curation_state import save
from engine.model_summaries import StoredSummary, SummaryOutcome, SummaryRequest
from engine.protocols import ModelSummarizer
from engine.session_curations import SessionCurations


class SummaryService:
    def __init__(self, curations: SessionCurations, summarizer: ModelSummarizer) -> None:
        self.curations = curations
        self.summarizer = summarizer

    async def run(self, session_id: int) -> int:
        """Write every summary the session's curation wants now; how many were written.

        Cancelling it (the app closes, a newer run replaces it) hands the unwritten requests back,
        so the next run asks for them again.
        """
        written = 0
        while requests := await asyncio.to_thread(self._take, session_id):
            left = list(requests)
            try:
                while left:
                    outcome = await self.summarizer.summarize(left[0])
                    await asyncio.to_thread(self._deliver, session_id, left[0], outcome)
                    written += outcome.text is not None
                    left.pop(0)
            except BaseException:
                self._hand_back(session_id, left)
                raise
        return written

    def _take(self, session_id: int) -> list[SummaryRequest]:
        with self.curations.lock:
            curation = self.curations.cached(session_id)
            book = curation.model_summaries if curation is not None else None
            return book.take_wanted() if book is not None else []

    def _deliver(self, session_id: int, request: SummaryRequest, outcome: SummaryOutcome) -> None:
        store = self.curations.store
        self.curations.tally(session_id).add(outcome.usage)
        stored: StoredSummary | None = None
        if outcome.text is not None:
            stored = StoredSummary(
                request.source_id,
                request.level,
                request.hash,
                outcome.text,
                outcome.model or self.summarizer.model,
            )
            # Outside the lock: the store skips it if the message changed or went meanwhile.
            store.save_summary(stored)
        with self.curations.lock:
            curation = self.curations.cached(session_id)
            if curation is None or curation.model_summaries is None:
                return  # rebuilt from the store on next use, which now holds the summary
            if stored is None:
                curation.model_summaries.failed(request)
                return
            delta = curation.adopt_summary(stored, stored.model)
            if delta.items or delta.ledger:
                save(store, session_id, curation, delta)

    def _hand_back(self, session_id: int, requests: list[SummaryRequest]) -> None:
        # Synchronous: this runs while the task is being cancelled.
        with self.curations.lock:
            curation = self.curations.cached(session_id)
            if curation is not None and curation.model_summaries is not None:
                curation.model_summaries.returned(requests)
