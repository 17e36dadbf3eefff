"""Work-arounds for bugs in Textual (and the libraries it draws with) that cost Heedful dearly,
each undone once fixed upstream.

``StylesCache.get_inner_outer`` (textual 8.2.8) is an instance method under ``lru_cache(1024)``:
the cache keeps the last 1,024 widgets' style caches alive, with every line each had drawn, long
after the widgets are gone (Textualize/textual#6665), and scrolling a long session replaces
widgets page after page.

mdurl (0.1.2) fills its percent-encoding tables on first use, publishing each table before filling
it. Textual's Markdown parses in the default thread pool, so a page of messages mounted at once
parses in several threads: one that finds a half-filled table fails with an IndexError on the
session's first link, and the app stops with a traceback (seen once in the long-session
benchmark). Filling the tables on the main thread before any Markdown is parsed closes the race:
each module that shows Markdown does so as it is imported (:func:`fill_mdurl_tables`), so the
first screen, which shows none, does not wait for markdown-it.

``Compositor.reflow`` (textual 8.2.8) arranges every widget into a new full map but leaves the map
marked invalid when it was (any refreshed widget off screen marks it so). The first widget asking
for its region after the layout then has the whole screen arranged a second time, several times
a turn.

``Compositor._get_renders`` (textual 8.2.8) draws, for a partial update, every widget whose clip
overlaps the updated area, and all of its visible lines: a screen-wide container or the footer,
whose clip is the screen, is drawn whole when a line of the panel changes. Drawing only the
updated rows (at full width, so every cut is still filled) sends the terminal the same cells.
``Screen._compositor_refresh`` (textual 8.2.8) renders a frame while the app holds updates back
(its start-up holds them until the first screen and all its widgets are mounted), and ``_display``
drops it; the compositor counts it drawn, so the first frame written sends only what changed since:
the rest of the first screen reached the terminal only with a later layout. A frame asked for
during a hold is now not rendered at all, and the whole screen is drawn once the hold ends.
The figures behind each fix: docs/performance.md, "Figures behind the code".
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from textual._compositor import Compositor, ReflowResult
from textual._styles_cache import StylesCache
from textual.app import App
from textual.color import Color
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

CHECKED_WITH = "8.2.8"
"""The Textual (pinned in pyproject.toml) that these patches, and Heedful's other uses of its
private names (:data:`PRIVATE_NAMES`), were checked against. On any other the patches are not
applied, and tests/test_textual_fixes.py fails until each use is checked again."""

PRIVATE_NAMES = (
    ("textual._compositor", "Compositor.reflow"),  # patched here; report drafted in docs/upstream/
    ("textual._compositor", "Compositor._get_renders"),  # patched here; an optimisation, not a bug
    ("textual._styles_cache", "StylesCache.get_inner_outer"),  # patched here: Textualize/textual#6665
    ("textual.screen", "Screen._compositor_refresh"),  # patched here: frames held, not dropped
    ("textual.app", "App._end_batch"),  # patched here: the held frame drawn
    ("textual.app", "App._fatal_error"),  # tui/app.py: the crash report through the redaction gate
    ("textual.app", "App._close_messages_no_wait"),  # tui/app.py, as Textual's own _fatal_error
    ("textual._time", "get_time"),  # tui/typing.py: a key's time against when a dialog was drawn
    ("textual.widgets._markdown", "MarkdownParagraph"),  # tui/widgets/message_markdown.py
    ("textual.widgets._footer", "FooterKey"),  # tui/widgets/help_footer.py
)
"""Private names of Textual that Heedful uses (module, attribute path); instance attributes it
reads (App._exit_renderables, App._batch_count, Widget._anchor_released,
Compositor._full_map_invalidated, Compositor._dirty_regions, Screen._dirty_widgets) are checked
by the tests."""


def textual_version() -> str | None:
    """The installed Textual's version, read from the name of its dist-info directory (None when
    there is none beside it): importlib.metadata's imports would delay the first frame."""
    import textual

    names = [p.name for p in Path(textual.__file__).parent.parent.glob("textual-*.dist-info")]
    return names[0].removeprefix("textual-").removesuffix(".dist-info") if len(names) == 1 else None


@lru_cache(1024)
def _inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    """What ``get_inner_outer`` computes, cached by the colours alone (not by the widget)."""
    return Style(background=base_background + background), Style(background=base_background)


def _get_inner_outer(self: StylesCache, base_background: Color, background: Color) -> tuple[Style, Style]:
    return _inner_outer(base_background, background)


def fill_mdurl_tables() -> None:
    """Have mdurl build, in this thread, the tables markdown-it's link normalizers use: called by
    the modules that show Markdown as they are imported, before any Markdown is parsed."""
    from markdown_it.common.normalize_url import normalizeLink, normalizeLinkText

    normalizeLink("https://example.com/")
    normalizeLinkText("https://example.com/")


_reflow = Compositor.reflow


def _reflow_keeping_map(self: Compositor, parent: Widget, size: Size) -> ReflowResult:
    result = _reflow(self, parent, size)
    self._full_map_invalidated = False  # the map was just made whole, from this root and size
    return result


_get_renders = Compositor._get_renders


def _get_renders_in_rows(
    self: Compositor, crop: Region | None = None
) -> Iterable[tuple[Region, Region, list[Strip]]]:
    """What ``_get_renders`` yields, each widget's lines cut to the rows of ``crop`` (the only
    rows a partial update writes, at full width: every cut of them is filled, as before);
    widgets with no line there are not drawn at all."""
    if crop is None:
        yield from _get_renders(self, crop)
        return
    rows = Region(0, crop.y, self.size.width, crop.height)
    for widget, (region, clip) in self.visible_widgets.items():
        if not crop.overlaps(clip):
            continue  # as Textual: its cells are outside what is written
        shown_clip = clip.intersection(rows)
        shown = region.intersection(shown_clip)
        if shown:
            cropped = Region(shown.x - region.x, shown.y - region.y, shown.width, shown.height)
            yield region, shown_clip, widget.render_lines(cropped)


_compositor_refresh = Screen._compositor_refresh
_end_batch = App._end_batch

_held: set[Screen[object]] = set()
"""Screens whose frame was asked for while updates were held back: drawn whole when they end."""


def _compositor_refresh_unless_held(self: Screen[object]) -> None:
    app = self.app
    if app._batch_count and not app.is_inline and self is app.screen:
        self._compositor._dirty_regions.add(self._compositor.size.region)  # the next frame is whole
        self._dirty_widgets.clear()
        _held.add(self)
        return
    _compositor_refresh(self)


def _end_batch_drawing_held(self: App[object]) -> None:
    _end_batch(self)
    if not self._batch_count and _held:
        screens = list(_held)
        _held.clear()
        for screen in screens:
            if screen.is_attached and screen is self.screen:
                screen.refresh()


def install() -> None:
    """Apply the fixes still needed by the libraries in use (idempotent); Textual's only on the
    version they were checked against."""
    if "markdown_it" in sys.modules:  # else the first module to show Markdown fills them
        fill_mdurl_tables()
    if textual_version() != CHECKED_WITH:
        return
    method = StylesCache.__dict__.get("get_inner_outer")
    if hasattr(method, "cache_clear"):  # still the leaking lru_cache: a fixed Textual has none
        method.cache_clear()  # type: ignore[union-attr]
        StylesCache.get_inner_outer = _get_inner_outer  # type: ignore[method-assign,assignment]
    Compositor.reflow = _reflow_keeping_map  # type: ignore[method-assign]
    Compositor._get_renders = _get_renders_in_rows  # type: ignore[method-assign]
    Screen._compositor_refresh = _compositor_refresh_unless_held  # type: ignore[method-assign,assignment]
    App._end_batch = _end_batch_drawing_held  # type: ignore[method-assign,assignment]
