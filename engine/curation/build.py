"""A long session's curation read in the background, its latest messages first.

:class:`engine.curation.session_curations.SessionCurations` curates the latest messages of a long session
when it is first used, so that it opens and sends at once; a thread then reads more and more of
it, each curation taking the place of the last, and a request meanwhile is planned from the one
in use (the panel says how much of the session it holds).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from engine.chat import BuildProgress

if TYPE_CHECKING:
    from engine.curation.session_curations import SessionCurations

BUILD_GROWTH = 20
"""Each curation read holds this many times the messages of the last (at most the whole): the
whole then costs about 1.05 times one reading of it, and the curation it replaces, held in
memory meanwhile, is small. Smaller steps show more progress but cost more of both."""


BUILD_DELAY = 1.0
"""Seconds the reading waits after the session is opened: what the app does next (drawing it,
loading the model's client, sending a first message) runs meanwhile without the reading taking
half the interpreter's time and adding its memory to theirs."""


class Build:
    """A session's curation being read in the background."""

    def __init__(self, total: int, limit: int) -> None:
        self.total = total
        """The messages the whole curation will hold."""
        self.limit = limit
        """The most messages curated (engine.curation.session_curations.CURATED_LIMIT)."""
        self.changes = 0
        """Changes made to the curation in use: one made while the next is read has it catch up."""


def grow(curations: SessionCurations, session_id: int, build: Build, read: int) -> None:
    """In a thread: read the session's curation again, :data:`BUILD_GROWTH` times as many of its
    latest messages each time, each taking the place of the last, until it holds them all.

    A change made meanwhile to the curation in use (a turn planned, a message taken) was written
    to the store: the next catches up with it there before taking its place."""
    time.sleep(BUILD_DELAY)
    try:
        while (seen := curations.build_changes(session_id, build)) is not None:
            keep = min(read * BUILD_GROWTH, build.limit)
            cut = curations.store.history_cut(session_id, keep)
            done = cut is None or keep >= build.limit
            curation = curations.read(session_id, cut, earlier=done)
            progress = None if done else BuildProgress(min(keep, build.total), build.total)
            if not curations.adopt_built(session_id, build, curation, progress, seen):
                return
            read = keep
    except Exception:
        # The store failed (or the app is closing): the part read stays in use, and the panel
        # says no more than that the latest messages are curated.
        curations.end_build(session_id, build)
