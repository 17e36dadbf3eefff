"""Which messages the request's story so far quotes, and how a message's reason says so: a pruned
message the story quotes is not one the model sees nothing of (:mod:`engine.summaries.story`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

StoryLine = tuple[tuple[int, ...], str]
"""A line of the story as a plan holds it: the messages it quotes, and the line."""

QUOTE_CHARS = 64
"""A message's words in the story are named in its reason by at most this many characters
(inspect shows the lines whole)."""
_LINE = re.compile(r"- \[([^\]]*)\] (.*)", re.DOTALL)
_PIECES = " | "
"""What joins a line's quotes of its messages (engine.summaries.story_lines)."""


def story_quotes(story: Sequence[StoryLine]) -> dict[int, tuple[StoryLine, ...]]:
    """Each quoted message's lines of ``story`` (the plan's ``(sources, line)`` pairs), oldest first."""
    quoted: dict[int, list[StoryLine]] = {}
    for told in story:
        for source in told[0]:
            quoted.setdefault(source, []).append(told)
    return {item_id: tuple(lines) for item_id, lines in quoted.items()}


def story_reason(item_id: int, lines: Sequence[StoryLine]) -> str:
    """``quoted in the story so far, line [#12, #14]: "you: the refund…"``: its own words in the
    first line that quotes it, shortened (the whole line when they cannot be told apart)."""
    sources, line = lines[0]
    found = _LINE.fullmatch(line)
    ids, said = (found.group(1), found.group(2)) if found else ("", line)
    pieces = said.split(_PIECES)
    if len(pieces) == len(sources) and item_id in sources:
        said = pieces[sources.index(item_id)]
    if len(said) > QUOTE_CHARS:
        said = said[: QUOTE_CHARS - 1].rstrip() + "…"
    where = f", line [{ids}]" if ids else ""
    more = len(lines) - 1
    also = f" (and {more} more line{'s' if more > 1 else ''})" if more else ""
    return f'quoted in the story so far{where}: "{said}"{also}'
