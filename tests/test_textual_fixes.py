"""The work-arounds in ``tui.textual_fixes`` hold against the bugs they were written for."""

from __future__ import annotations

import sys
import threading

import mdurl._decode
import mdurl._encode
from markdown_it import MarkdownIt

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
