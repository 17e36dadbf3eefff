"""Shortening a text for a title, a label or a stored summary: cut at a word where one is near the
limit, with an ellipsis, so a shortened text never ends mid-word or on a comma."""

from __future__ import annotations


def clip_text(text: str, limit: int, *, trailing: str = " ,.;:") -> str:
    """``text`` if it fits in ``limit`` characters, else cut at the last space in its second half
    (mid-word when there is none), the ``trailing`` characters taken off its end, and ended with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(trailing) + "…"
