"""The work-arounds in ``tui.textual_fixes`` hold against the bugs they were written for."""

from __future__ import annotations

import sys
import threading

import mdurl._decode
import mdurl._encode
from markdown_it import MarkdownIt
from textual._compositor import CompositorMap
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Static

from tui import textual_fixes

LINKS = "see [the docs](https://example.com/a b%20c?x=1#y) and <https://example.org/é>"


def _parse_in_threads(threads: int = 8) -> list[BaseException]:
    """Parse a message with links in several threads at once, as a mounted page does."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def parse() -> None:
        parser = MarkdownIt("gfm-like")
        start.wait()
        try:
            parser.parse(LINKS)
        except Exception as error:  # the race shows as IndexError; any failure is the bug
            errors.append(error)

    workers = [threading.Thread(target=parse) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return errors


def test_markdown_with_links_parses_in_many_threads_at_once_after_install() -> None:
    # Without the fix about half of these rounds fail: a thread finds mdurl's table half-filled.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so the race has every chance to show
    try:
        for _ in range(20):
            mdurl._encode.encode_cache.clear()
            mdurl._decode.decode_cache.clear()
            textual_fixes.install()
            assert _parse_in_threads() == []
    finally:
        sys.setswitchinterval(interval)


class _Lines(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield from (Static(f"line {n}", id=f"line-{n}") for n in range(60))


async def test_a_layout_arranges_the_screen_once() -> None:
    # Refreshing a widget off screen marked the map stale; the layout that follows arranged the
    # whole screen, and the first widget to ask its region after it had it arranged again.
    textual_fixes.install()
    app = _Lines()
    async with app.run_test(size=(40, 10)) as pilot:
        compositor = app.screen._compositor
        arranged: list[bool] = []
        arrange = compositor._arrange_root

        def counting(
            root: Widget, size: Size, visible_only: bool = True
        ) -> tuple[CompositorMap, set[Widget]]:
            arranged.append(visible_only)
            return arrange(root, size, visible_only)

        compositor._arrange_root = counting  # type: ignore[method-assign]
        off_screen = app.query_one("#line-50", Static)
        off_screen.update("line 50, changed")
        await pilot.pause()
        assert off_screen.region.y > 10  # known, below the screen
        assert arranged.count(False) == 1  # the whole screen, once
