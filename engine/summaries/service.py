"""Writes the summaries that curations want, with a model, away from the turn.

A plan that wants a model's summary leaves the item as it is (:mod:`engine.summaries.book`); after
the turn the app runs :meth:`SummaryService.run` in the background. Each summary is stored as it
arrives (it survives a restart; a changed message drops it) and handed to the session's curation,
which uses it from its next plan on. Typing and sending never wait for it: the session's curation is
held only to take the requests and to hand each summary over, and neither is done while a reply is
being prepared (its request goes first, its plan has the lock). The story's segments a model tells
(:mod:`engine.summaries.story_book`) are written the same way, after the messages' summaries, at most
:data:`MAX_STORY_LINES_PER_RUN` a run (the rest on the next turns).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from engine.curation.session_curations import SessionCurations
from engine.protocols.models import ModelSummarizer
from engine.summaries.model import StoredSummary, SummaryOutcome, SummaryRequest, source_hash
from engine.summaries.story_book import StoredStoryLine, StoryRequest

Wanted = SummaryRequest | StoryRequest
MAX_STORY_LINES_PER_RUN = 8
"""Story lines one run asks for (one run follows each turn): connecting to a model in a long session
catches up a few segments a turn instead of flooding the server with every closed one at once."""


class SummaryService:
    def __init__(
        self, curations: SessionCurations, *, quiet: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.curations = curations
        self._quiet = quiet
        """Awaited before each request and each delivery: a reply being prepared goes first (its
        request out before these, its plan not waiting for the curation's lock)."""
        self._running: set[int] = set()
        """Sessions a run is writing for. Changed while the session's curation is held, together
        with taking the wanted requests, so that no request is left unasked between two runs."""

    async def run(self, session_id: int, summarizer: ModelSummarizer) -> int:
        """Have ``summarizer`` write every summary the session's curation wants, until none is
        wanted; how many were written. Returns 0 at once while another run writes for the session:
        that one takes what is wanted now as well (a run is never cut short by a newer turn, so a
        fast typist does not starve a slow summary).

        Cancelling it (the app closes) hands the unwritten requests back, so the next run asks
        for them again.
        """
        if not await asyncio.to_thread(self._start, session_id):
            return 0
        written = 0
        left: list[Wanted] = []
        story_lines = MAX_STORY_LINES_PER_RUN
        try:
            while requests := await asyncio.to_thread(self._take, session_id, story_lines):
                story_lines -= sum(isinstance(r, StoryRequest) for r in requests)
                left = list(requests)
                while left:
                    wanted = left[0]
                    await self._wait_for_quiet()
                    if isinstance(wanted, StoryRequest):
                        outcome = await summarizer.summarize(wanted.request)
                        await self._wait_for_quiet()
                        await asyncio.to_thread(self._tell, session_id, wanted, outcome, summarizer.model)
                    else:
                        outcome = await summarizer.summarize(wanted)
                        await self._wait_for_quiet()
                        await asyncio.to_thread(self._deliver, session_id, wanted, outcome, summarizer.model)
                    written += outcome.text is not None
                    left.pop(0)
        except BaseException:
            self._hand_back(session_id, left)
            raise
        return written

    async def _wait_for_quiet(self) -> None:
        if self._quiet is not None:
            await self._quiet()

    def _start(self, session_id: int) -> bool:
        with self.curations.held(session_id):
            if session_id in self._running:
                return False
            self._running.add(session_id)
            return True

    def _take(self, session_id: int, story_lines: int) -> list[Wanted]:
        """What to write next: the messages' summaries first (they free room), then at most
        ``story_lines`` of the story's lines, once the session is read whole (the part read
        first is segmented from its own start: lines asked of it would not match the whole's)."""
        with self.curations.held(session_id) as held:
            curation = held.cached
            book = curation.model_summaries if curation is not None else None
            taken: list[Wanted] = list(book.take_wanted()) if book is not None else []
            story = curation.state.story_book if curation is not None and curation.building is None else None
            if not taken and story is not None and story_lines > 0:
                taken = list(story.take_wanted(story_lines))
            if not taken:
                self._running.discard(session_id)
            return taken

    def _deliver(self, session_id: int, request: SummaryRequest, outcome: SummaryOutcome, model: str) -> None:
        store = self.curations.store
        self.curations.spend(session_id, outcome.usage)
        stored: StoredSummary | None = None
        if outcome.text is not None:
            stored = StoredSummary(
                request.source_id,
                request.level,
                request.hash,
                outcome.text,
                outcome.model or model,
            )
            # Outside the lock: the store skips it if the message changed or went meanwhile.
            store.save_summary(stored)
        with self.curations.held(session_id) as held:
            curation = held.cached
            if curation is None or curation.model_summaries is None:
                return  # rebuilt from the store on next use, which now holds the summary
            if stored is None:
                curation.model_summaries.failed(request)
                return
            delta = curation.adopt_summary(stored, stored.model)
            if delta.items or delta.ledger:
                held.save(delta)

    def _tell(self, session_id: int, wanted: StoryRequest, outcome: SummaryOutcome, model: str) -> None:
        """A segment's line the model wrote (stored, then used from the next plan on), or the
        extractive lines kept for it."""
        self.curations.spend(session_id, outcome.usage)
        line: StoredStoryLine | None = None
        said = " ".join(outcome.text.split()) if outcome.text is not None else ""
        if said:
            line = StoredStoryLine(
                wanted.first_id,
                wanted.last_id,
                outcome.model or model,
                wanted.sources,
                wanted.plain or source_hash(wanted.request.text),
                said,
            )
            self.curations.store.save_story_line(session_id, line)
        with self.curations.held(session_id) as held:
            curation = held.cached
            book = curation.state.story_book if curation is not None else None
            if book is None:
                return  # rebuilt from the store on next use, which now holds the line
            if line is None:
                book.failed(wanted)
            else:
                book.add(line)

    def _hand_back(self, session_id: int, requests: list[Wanted]) -> None:
        # Synchronous: this runs while the task is being cancelled.
        with self.curations.held(session_id) as held:
            self._running.discard(session_id)
            curation = held.cached
            if curation is None:
                return
            if curation.model_summaries is not None:
                curation.model_summaries.returned([r for r in requests if isinstance(r, SummaryRequest)])
            if curation.state.story_book is not None:
                curation.state.story_book.returned([r for r in requests if isinstance(r, StoryRequest)])
