"""The work-arounds in ``tui.textual_fixes`` hold against the bugs they were written for."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
import sys
import threading
from pathlib import Path

import mdurl._decode
import mdurl._encode
from markdown_it import MarkdownIt
from textual._compositor import Compositor, CompositorMap
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Static

from tests.apphelpers import wait_for
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
        await wait_for(pilot, lambda: app.query_one("#line-0", Static).region.height == 1)  # laid out
        await pilot.pause()
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


def test_the_textual_in_use_is_the_one_every_private_use_was_checked_against() -> None:
    """Fails when Textual changes (pyproject.toml pins it): check each patch and private name in
    tui/textual_fixes.py against the new version (is the bug fixed upstream? is the name still
    there and meaning the same?), then move CHECKED_WITH on."""
    installed = importlib.metadata.version("textual")
    pinned = re.search(r'"textual==([^"]+)"', Path("pyproject.toml").read_text(encoding="utf-8"))
    assert pinned is not None and pinned.group(1) == installed == textual_fixes.CHECKED_WITH
    assert textual_fixes.textual_version() == installed  # what install() checks
    for module_name, path in textual_fixes.PRIVATE_NAMES:
        found: object = importlib.import_module(module_name)
        for part in path.split("."):
            found = getattr(found, part)  # AttributeError names the one gone
    widget = Widget()
    app = App[None]()
    assert isinstance(widget._anchor_released, bool)
    assert isinstance(app._exit_renderables, list)
    assert "_full_map_invalidated" in inspect.getsource(Compositor.__init__)
