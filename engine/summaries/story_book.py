"""The story so far's lines written by a model: one or two sentences per closed topic segment.

When a summarizer model is connected, each closed segment (:mod:`engine.summaries.story`) that the
story tells is asked for once, in the background (:class:`engine.summaries.service.SummaryService`),
from its fragments' sentences (bounded input). Until the line arrives, and whenever the model fails,
the segment keeps its extractive lines. A written line names only the messages whose sentences the
model was given.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.summaries.model import SummaryLevel, SummaryRequest, source_hash
from engine.summaries.story import Fragment, Segment

SESSION_FIRST_ID = 0
"""A stored line whose first id is this tells the whole session (:mod:`engine.summaries.story_session`);
its last id is the last message of the last closed segment it was written from."""
MAX_SEGMENT_SOURCES = 16
"""The model is given at most this many of a segment's fragments (its first ones), and the line
names only those."""


@dataclass(frozen=True, slots=True)
class StoredStoryLine:
    """A model's line for one segment, as the store keeps it."""

    first_id: int
    last_id: int
    model: str
    sources: tuple[int, ...]
    source_hash: str
    """Of the segment's sentences and speakers, without their ids (:func:`plain_hash`; older lines: of
    the text the model was given): a line of other text is not used, one of a session imported
    under other ids is."""
    text: str


@dataclass(frozen=True, slots=True)
class StoryRequest:
    """One segment to be told by the model: the summary request sent, and what it stands for."""

    first_id: int
    last_id: int
    sources: tuple[int, ...]
    request: SummaryRequest
    plain: str = ""
    """The :func:`plain_hash` of what the model reads (stored with its line)."""


def segment_source(fragments: list[Fragment]) -> tuple[tuple[int, ...], str]:
    """The messages the model is given of a segment, and the text it reads (a line each)."""
    given = fragments[:MAX_SEGMENT_SOURCES]
    text = "\n".join(f"{f.label} {f.speaker}: {f.text}" for f in given)
    return tuple(f.item_id for f in given), text


def plain_hash(fragments: list[Fragment]) -> str:
    """The hash of the segment's given sentences with their speakers but not their ids (an imported
    session's messages have other ids, the same words)."""
    return source_hash("\n".join(f"{f.speaker}: {f.text}" for f in fragments[:MAX_SEGMENT_SOURCES]))


def story_request(source_id: int, label: str, text: str, name: str) -> SummaryRequest:
    """A request for a story line: ``text`` read with the story prompt, a brief answer."""
    return SummaryRequest(
        source_id=source_id,
        label=label,
        role="user",
        text=text,
        tokens=max(1, len(text) // 4),
        entities=(),
        level=SummaryLevel.BRIEF,
        story=True,
        name=name,
    )


class StoryBook:
    """A session's model-written story lines: those written, and the segments wanted."""

    def __init__(self) -> None:
        self._written: dict[tuple[int, int], StoredStoryLine] = {}
        self._wanted: dict[tuple[int, int], StoryRequest] = {}
        self._asked: set[tuple[int, int]] = set()
        self._failed: set[tuple[int, int]] = set()
        """Segments the model could not tell this session: their extractive lines stay."""
        self._hashes: dict[tuple[int, int], tuple[str, str]] = {}
        """Each closed segment's :func:`plain_hash` and the older hash of its given text (the text
        is made again when asked for: kept, a long session's segments held its every sentence again)."""
        self.session: StoredStoryLine | None = None
        """The model's line for the whole session (the latest written), if any."""

    def load(self, lines: list[StoredStoryLine]) -> None:
        """Take the lines the store kept (a later one of the same segment replaces an earlier)."""
        for line in lines:
            self.add(line)

    def _source(self, segment: Segment) -> tuple[tuple[int, int], str, str] | None:
        if not segment.closed or not segment.fragments:
            return None
        key = (segment.fragments[0].item_id, segment.fragments[-1].item_id)
        found = self._hashes.get(key)
        if found is None:
            text = segment_source(segment.fragments)[1]
            found = self._hashes[key] = (plain_hash(segment.fragments), source_hash(text))
        return key, *found

    def line(self, segment: Segment) -> tuple[tuple[int, ...], str] | None:
        """The model's line for ``segment`` (its sources and text), if written for its current text."""
        found = self._source(segment)
        if found is None:
            return None
        key, plain, older = found
        written = self._written.get(key)
        if written is not None and written.source_hash in (plain, older):
            return written.sources, written.text
        return None

    def want(self, segment: Segment) -> None:
        """Ask for a line of ``segment`` (closed, told, with none written) unless asked already
        or failed this session."""
        found = self._source(segment)
        if found is None or self.line(segment) is not None:
            return
        key, plain, _older = found
        if key not in self._asked and key not in self._failed and key not in self._wanted:
            sources, text = segment_source(segment.fragments)
            request = story_request(
                key[0],
                f"{segment.fragments[0].label}–{segment.fragments[-1].label}",
                text,
                "conversation: a passage of several messages, one a line, each with its id and speaker",
            )
            self._wanted[key] = StoryRequest(key[0], key[1], sources, request, plain)

    def take_wanted(self, limit: int | None = None) -> list[StoryRequest]:
        """The wanted lines, at most ``limit``: the newest segments first (the story tells them in
        most detail, and they are what the conversation is about now), the session's line last (it
        is written from the segments' lines); the rest stay wanted."""
        ordered = sorted(self._wanted.values(), key=lambda r: (r.first_id == SESSION_FIRST_ID, -r.first_id))
        taken = ordered if limit is None else ordered[: max(0, limit)]
        for request in taken:
            del self._wanted[(request.first_id, request.last_id)]
        self._asked.update((r.first_id, r.last_id) for r in taken)
        return taken

    def add(self, line: StoredStoryLine) -> None:
        key = (line.first_id, line.last_id)
        self._asked.discard(key)
        if line.first_id != SESSION_FIRST_ID:
            self._written[key] = line
        elif self.session is None or line.last_id >= self.session.last_id:
            self.session = line

    def want_session(self, request: StoryRequest) -> None:
        """Ask for the session's line (see :func:`engine.summaries.story_session.session_request`)
        unless asked already or failed this session."""
        key = (request.first_id, request.last_id)
        if key not in self._asked and key not in self._failed and key not in self._wanted:
            self._wanted[key] = request

    def failed(self, request: StoryRequest) -> None:
        key = (request.first_id, request.last_id)
        self._asked.discard(key)
        self._failed.add(key)

    def returned(self, requests: list[StoryRequest]) -> None:
        for request in requests:
            key = (request.first_id, request.last_id)
            self._asked.discard(key)
            self._wanted.setdefault(key, request)
