"""Which messages the request's story so far quotes, and how a message's reason says so: a pruned
message the story quotes is not one the model sees nothing of (:mod:`engine.summaries.story`)."""

from __future__ import annotations

from collections.abc import Sequence

QUOTE_CHARS = 72
"""A story line is named in a reason by at most this many characters (inspect shows it whole)."""


def story_quotes(story: Sequence[tuple[tuple[int, ...], str]]) -> dict[int, tuple[str, ...]]:
    """Each quoted message's lines of ``story`` (the plan's ``(sources, line)`` pairs), oldest first."""
    quoted: dict[int, list[str]] = {}
    for sources, line in story:
        for source in sources:
            quoted.setdefault(source, []).append(line)
    return {item_id: tuple(lines) for item_id, lines in quoted.items()}


def story_reason(lines: Sequence[str]) -> str:
    """``quoted in the story so far: [#12, #14] you: the refund…``: the first line that quotes it,
    shortened (and how many more do)."""
    line = lines[0].removeprefix("- ")
    if len(line) > QUOTE_CHARS:
        line = line[: QUOTE_CHARS - 1].rstrip() + "…"
    more = f" (and {len(lines) - 1} more lines)" if len(lines) > 1 else ""
    return f"quoted in the story so far: {line}{more}"
