"""The story's first line: the whole session in one line, above the segments' lines.

Offline it is extractive: how many messages and topics the story tells, then the key phrase of its
largest topics' key messages, oldest first, naming only those messages. A model's line for the
session (:class:`engine.summaries.story_book.StoryBook`) replaces it while none of the messages it
names is withheld; it is written from the story's segment lines, stored, and asked for again only
when :data:`REFRESH_SEGMENTS` more segments closed. It takes at most :data:`SESSION_SHARE` of the
story's room, and is told only when the story has :data:`MIN_SEGMENTS` topics or more (with fewer,
the segment lines say as much).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from engine.summaries.story import Fragment, Story
from engine.summaries.story_book import SESSION_FIRST_ID, StoredStoryLine, StoryRequest, story_request

MIN_SEGMENTS = 3
"""Fewer topic segments to tell: no session line."""
MAX_SESSION_SOURCES = 3
"""The session line names at most this many messages: the key messages of its largest topics."""
SESSION_SHARE = 0.2
"""The session line is told only when it takes at most this part of the story's room."""
REFRESH_SEGMENTS = 4
"""A model's session line is asked for again once this many segments closed after it was written."""
MAX_SESSION_LINES = 40
"""The model writes the session line from at most this many segment lines (the newest)."""


def session_line(told: Sequence[tuple[int, Fragment]]) -> tuple[tuple[int, ...], str] | None:
    """The extractive session line (its sources, oldest first, and its words without ids), or None
    when the story tells fewer than :data:`MIN_SEGMENTS` topics. ``told``: each topic the story
    may tell, oldest first, as how many of its messages it may quote and its most central one."""
    if len(told) < MIN_SEGMENTS:
        return None
    largest = heapq.nsmallest(MAX_SESSION_SOURCES, range(len(told)), key=lambda n: (-told[n][0], n))
    picked = [told[n][1] for n in sorted(largest)]
    said = " | ".join(f.phrase for f in picked)
    messages = sum(count for count, _top in told)
    text = f"the session so far, {messages:,} messages in {len(told):,} topics, mostly: {said}"
    return tuple(f.item_id for f in picked), text


def session_request(
    story: Story, written: StoredStoryLine | None, lines: Sequence[str], sources: tuple[int, ...]
) -> StoryRequest | None:
    """The model's session line to ask for, written from the story's segment ``lines`` and naming
    ``sources``: when none is ``written`` yet, or :data:`REFRESH_SEGMENTS` segments closed since it
    was (not every turn); None otherwise."""
    closed = [s for s in story.segments if s.closed and s.fragments]
    if len(closed) < MIN_SEGMENTS or not lines or not sources:
        return None
    if written is not None:
        covered = sum(1 for s in closed if s.fragments[-1].item_id <= written.last_id)
        if len(closed) - covered < REFRESH_SEGMENTS:
            return None
    text = "\n".join(lines[-MAX_SESSION_LINES:])
    request = story_request(
        sources[0],
        "the story so far",
        text,
        "the story so far: one line per topic of a conversation, oldest first, with the ids it tells of",
    )
    return StoryRequest(SESSION_FIRST_ID, closed[-1].fragments[-1].item_id, sources, request)
