"""The prompt's story section: the story's segments as lines, oldest first, within a fixed room.

Each segment is told at the most detail that fits, breadth before depth: its user messages' key
phrases on one line (the *index*); then, newest segments first, a line per exchange with both
sides' key phrases, then with their sentences. When even the index of every segment does not fit,
the oldest segments are told by their most central phrase alone, several segments to a line (and,
past that, only every second, third… of them: the session in outline). A line quotes its sources'
words and names only those; a message sent verbatim in the request is left out (the model reads it
whole). A closed segment a model has told (:mod:`engine.summaries.story_book`) is told by the model's
line instead of its index and exchanges (it names every message the model read of the segment, some
of which the request may also send whole).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from engine.curation.items import id_label
from engine.summaries.story import Fragment, Segment, Story
from engine.summaries.story_session import SESSION_SHARE

Written = Callable[[Segment], tuple[tuple[int, ...], str] | None]
"""A segment's line written by a model (the messages it names, its text), or None."""

STORY_HEADER = (
    "The story so far (made by Heedful from the messages not sent in full; oldest first; "
    "each line quotes the messages it names):"
)
MAX_LINE_SOURCES = 6
"""A line quotes at most this many messages, a phrase or sentence of each."""
_COSTS_KEPT = 20_000
"""Token counts kept (a long session's pieces and lines); past it they are counted again."""


@dataclass(frozen=True, slots=True)
class StoryLine:
    sources: tuple[int, ...]
    """The messages the line quotes, oldest first."""
    text: str
    tokens: int
    """The line's tokens, with the newline that joins it to the next."""


@dataclass(slots=True)
class Told:
    """One segment's part of the story: the fragments it may quote, and how much it says."""

    users: list[Fragment]
    """What the user said (or, in a segment without a user message, its first fragment)."""
    unsent: tuple[int, ...]
    """Its messages the request does not send whole (their exchanges are told at levels 2 and 3,
    grouped when asked: most segments of a long session are told by their index alone)."""
    top: Fragment
    segment: Segment
    top_tokens: int = -1
    """What its top phrase adds to an outline line (counted once: -1 until then)."""
    level: int = 1
    """0: its top phrase only; 1: its index; 2: exchanges in phrases; 3: exchanges in sentences."""
    lines: list[tuple[list[StoryLine], int] | None] = field(default_factory=lambda: [None] * 4)
    """Its lines at each level asked for (by level), with their tokens."""


class StoryLines:
    """Renders a :class:`Story` within a room; caches token counts between plans."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._costs: dict[str, int] = {}
        self._told: dict[int, tuple[int, tuple[int, ...], Told | None, str | None]] = {}
        """Segment index → (its fragments, those unsent, what it tells): a segment is told the
        same way plan after plan while the same of its messages are sent whole."""
        self.detailed: list[Segment] = []
        """The segments the last rendering told in more than its outline (a model's line is
        wanted only for those)."""

    def header_tokens(self) -> int:
        return self._tokens(STORY_HEADER)

    def told(self, story: Story, sent: AbstractSet[int], written: Written | None = None) -> list[Told]:
        """The segments the story may tell this plan, oldest first: those with a message the
        request does not send whole (``sent``: left out), each told by a model's line when
        ``written`` has one."""
        parts = (self._segment(n, segment, sent, written) for n, segment in enumerate(story.segments))
        return [part for part in parts if part is not None]

    def render(
        self, told: list[Told], room: int, head: tuple[tuple[int, ...], str] | None = None
    ) -> list[StoryLine]:
        """The lines of ``told`` (:meth:`told`) that fit ``room`` tokens (the header included),
        oldest first; none if only the header would. ``head``: the session's line (its sources and
        text), told first when it takes at most :data:`SESSION_SHARE` of the room."""
        room -= self.header_tokens()
        self.detailed = []
        if room <= 0:
            return []
        first = self._tokened(*head) if head is not None else None
        if first is not None and first.tokens <= room * SESSION_SHARE:
            lines = self.render(told, room + self.header_tokens() - first.tokens)
            return [first, *lines] if lines else []
        if not told:
            return []
        for part in told:
            part.level = 1
        index = [self._level_lines(t, 1)[1] for t in told]
        total = sum(index)
        step = 1
        if total > room:
            # The oldest segments by their top phrase alone, as few as make the rest fit.
            tops = [self._top_tokens(t) for t in told]
            n = 0
            while n < len(told) and total > room:
                total += tops[n] - index[n]
                told[n].level = 0
                n += 1
            while total > room and step < len(told):
                step += 1  # the outline: every step-th top phrase
                total = sum(tops[::step])
        else:
            for level in (2, 3):  # breadth before depth, newer segments first
                for part in reversed(told):
                    if part.level != level - 1:
                        continue
                    more = self._level_lines(part, level)[1]
                    less = self._level_lines(part, part.level)[1]
                    if total + more - less <= room:
                        part.level = level
                        total += more - less
        lines = self._assemble(told, step)
        self.detailed = [t.segment for t in told if t.level]
        while lines and sum(line.tokens for line in lines) > room:
            lines.pop(0)  # estimates were short: the oldest goes, the share is never passed
        return lines

    def _assemble(self, told: list[Told], step: int) -> list[StoryLine]:
        lines: list[StoryLine] = []
        outline = [t.top for t in told if t.level == 0][::step]
        for start in range(0, len(outline), MAX_LINE_SOURCES):
            lines.append(self._line(outline[start : start + MAX_LINE_SOURCES], phrases=True))
        for part in told:
            if part.level:
                lines.extend(self._level_lines(part, part.level)[0])
        return lines

    def _segment(
        self, index: int, segment: Segment, sent: AbstractSet[int], written: Written | None
    ) -> Told | None:
        fragments = segment.fragments
        found = self._told.get(index)
        if (
            found is not None
            and fragments
            and found[0] == len(fragments) == len(found[1])
            and found[1][0] == fragments[0].item_id
            and found[1][-1] == fragments[-1].item_id
            and sent.isdisjoint(found[1])
        ):
            unsent = found[1]  # its messages as before, none of them sent: most segments, most plans
        else:
            unsent = tuple([f.item_id for f in fragments if f.item_id not in sent])
        model = written(segment) if written is not None and unsent else None
        said = model[1] if model is not None else None
        if found is not None and found[:2] == (len(segment.fragments), unsent) and found[3] == said:
            return found[2]
        told = _told(segment, unsent) if unsent else None
        if told is not None and model is not None:
            line = self._model_line(model[0], model[1], segment)
            for level in (1, 2, 3):
                told.lines[level] = ([line], line.tokens)
        self._told[index] = (len(segment.fragments), unsent, told, said)
        return told

    def _model_line(self, sources: tuple[int, ...], said: str, segment: Segment) -> StoryLine:
        labels = {f.item_id: f.label for f in segment.fragments}
        ids = ", ".join(labels[source] if source in labels else id_label(source) for source in sources)
        return self._tokened(sources, f"- [{ids}] {' '.join(said.split())}")

    def _tokened(self, sources: tuple[int, ...], text: str) -> StoryLine:
        return StoryLine(sources, text, self._tokens(text) + 1)

    def _level_lines(self, part: Told, level: int) -> tuple[list[StoryLine], int]:
        found = part.lines[level]
        if found is not None:
            return found
        if level == 1:
            users = part.users
            lines = [
                self._line(users[n : n + MAX_LINE_SOURCES], phrases=True)
                for n in range(0, len(users), MAX_LINE_SOURCES)
            ]
        else:
            unsent = set(part.unsent)
            exchanges = _exchanges([f for f in part.segment.fragments if f.item_id in unsent])
            lines = [self._line(ex[:MAX_LINE_SOURCES], phrases=level == 2) for ex in exchanges]
        part.lines[level] = found = (lines, sum(line.tokens for line in lines))
        return found

    def _line(self, fragments: Sequence[Fragment], *, phrases: bool) -> StoryLine:
        ids = ", ".join(f.label for f in fragments)
        said: list[str] = []
        speaker = ""
        for fragment in fragments:
            words = fragment.phrase if phrases else fragment.text
            if fragment.speaker != speaker:
                speaker = fragment.speaker
                said.append(f"{speaker}: {words}")
            else:
                said.append(words)
        text = f"- [{ids}] {' | '.join(said)}"
        return StoryLine(tuple(f.item_id for f in fragments), text, self._tokens(text) + 1)

    def _top_tokens(self, part: Told) -> int:
        """About what a segment's top phrase adds to an outline line (the phrase is made from its
        sentence when asked, and not kept among the counted texts)."""
        if part.top_tokens < 0:
            part.top_tokens = self._count(part.top.phrase) + self._count(part.top.label) + 3
        return part.top_tokens

    def _tokens(self, text: str) -> int:
        found = self._costs.get(text)
        if found is None:
            if len(self._costs) >= _COSTS_KEPT:
                self._costs.clear()
            found = self._costs[text] = self._count(text)
        return found


def _told(segment: Segment, ids: tuple[int, ...]) -> Told:
    """What of ``segment`` the story may quote: its messages ``ids``, those the request does not
    send whole (at least one)."""
    unsent = set(ids)
    fragments = segment.fragments
    users = [f for f in fragments if f.item_id in unsent and f.role == "user"]
    if not users:
        users = [next(f for f in fragments if f.item_id in unsent)]
    keep = {f.item_id for f in users}
    top = next(fragments[n] for n in segment.ranking() if fragments[n].item_id in keep)
    return Told(users, ids, top, segment)


def _exchanges(fragments: Sequence[Fragment]) -> list[list[Fragment]]:
    """Fragments grouped by exchange: each user message with the replies after it."""
    groups: list[list[Fragment]] = []
    for fragment in fragments:
        if fragment.role != "user" and groups:
            groups[-1].append(fragment)
        else:
            groups.append([fragment])
    return groups
