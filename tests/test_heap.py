"""Freezing the heap after a session loads must not keep a closed session's objects alive."""

from __future__ import annotations

import gc
import weakref

from tui import heap


class Node:
    def __init__(self) -> None:
        self.peer: Node | None = None


def test_objects_frozen_with_one_session_are_freed_after_the_next_switch() -> None:
    first, second = Node(), Node()
    first.peer, second.peer = second, first  # a cycle, as widgets and their parents form
    alive = weakref.ref(first)
    try:
        heap.settle()
        assert gc.get_freeze_count() > 0
        del first, second  # the session is closed
        heap.settle()  # the next session is shown
        assert alive() is None
    finally:
        gc.unfreeze()
