"""Words shared by every filterable list, so an empty result always reads the same way."""

from __future__ import annotations

from tui.sanitize import inert


def nothing_matches(typed: str) -> str:
    """What a filtered list says when the filter lets nothing through (``typed`` made inert)."""
    return f"Nothing matches “{inert(typed.strip())}”."
