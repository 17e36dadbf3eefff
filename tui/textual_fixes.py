"""Work-arounds for Textual bugs that cost Heedful dearly, each undone once Textual fixes it.

``StylesCache.get_inner_outer`` (textual 8.2.8) is an instance method under ``lru_cache(1024)``:
the cache keeps the last 1,024 widgets' style caches alive, with every line each had drawn, long
after the widgets are gone (Textualize/textual#6665). Scrolling a long session replaces widgets
page after page: measured at 10,000 messages, 60 pages of wheel scrolling grew the process by
82 MB, and by 52 MB with this fix (what is left is the 60 messages mounted at a time).
"""

from __future__ import annotations

from functools import lru_cache

from textual._styles_cache import StylesCache
from textual.color import Color
from textual.style import Style


@lru_cache(1024)
def _inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    """What ``get_inner_outer`` computes, cached by the colours alone (not by the widget)."""
    return Style(background=base_background + background), Style(background=base_background)


def _get_inner_outer(self: StylesCache, base_background: Color, background: Color) -> tuple[Style, Style]:
    return _inner_outer(base_background, background)


def install() -> None:
    """Apply the fixes still needed by the Textual in use (idempotent)."""
    method = StylesCache.__dict__.get("get_inner_outer")
    if hasattr(method, "cache_clear"):  # still the leaking lru_cache: a fixed Textual has none
        method.cache_clear()  # type: ignore[union-attr]
        StylesCache.get_inner_outer = _get_inner_outer  # type: ignore[method-assign,assignment]
