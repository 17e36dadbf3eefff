"""Words shared by the lists, so a count and an empty filtered list always read the same way."""

from __future__ import annotations

from tui.sanitize import inert


def counted(n: int, what: str) -> str:
    """``1 later message``, ``2 later messages``: a count and words that agree with it."""
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def nothing_matches(typed: str) -> str:
    """What a filtered list says when the filter lets nothing through (``typed`` made inert)."""
    return f"Nothing matches “{inert(typed.strip())}”."
