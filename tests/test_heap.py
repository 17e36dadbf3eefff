"""Freezing the heap after a session loads must not keep a closed session's objects alive, and
memory the app frees goes back to the system."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

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


def _resident_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(heap._glibc() is None, reason="malloc's controls are glibc's")
def test_memory_freed_between_survivors_goes_back_to_the_system() -> None:
    # 1,000-byte objects come from malloc itself, not Python's small-object pools. One in 64
    # survives, so no stretch of the heap is free up to its top, where malloc trims unasked.
    blocks = [bytes(1000) for _ in range(60_000)]
    survivors = blocks[::64]
    del blocks
    before = _resident_mb()
    assert heap.release()
    assert before - _resident_mb() > 25
    assert len(survivors) == 938  # alive until here


@pytest.mark.skipif(heap._glibc() is None, reason="malloc's controls are glibc's")
def test_the_arena_limit_is_accepted() -> None:
    assert heap.limit_arenas()


def test_keeping_frees_young_garbage_and_hides_survivors_from_full_collections() -> None:
    lost_a, lost_b = Node(), Node()
    lost_a.peer, lost_b.peer = lost_b, lost_a
    lost = weakref.ref(lost_a)
    del lost_a, lost_b  # garbage made just before: not frozen for good
    kept = Node()  # as a client's modules, imported after the session settled
    try:
        heap.keep()
        assert lost() is None
        assert not any(o is kept for o in gc.get_objects())  # out of every generation's scan
    finally:
        gc.unfreeze()


def _full_collections_during(make: Callable[[], object]) -> tuple[int, object]:
    """How many full collections ran while ``make`` ran (and what it made, kept alive)."""
    full: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(count)
    try:
        made = make()
    finally:
        gc.callbacks.remove(count)
    return len(full), made


def _a_session() -> object:
    """Long-lived containers, as a loading session's items and index are."""
    return [[n] for n in range(400_000)]


def test_no_full_collection_runs_while_a_session_loads() -> None:
    normal = gc.get_threshold()
    usually, _ = _full_collections_during(_a_session)
    assert usually > 0  # such a load does set them off
    with heap.loading():
        loading, _ = _full_collections_during(_a_session)
    assert loading == 0
    assert gc.get_threshold() == normal


def test_loads_that_overlap_give_the_collector_back_once_both_end() -> None:
    normal = gc.get_threshold()
    first, second = heap.loading(), heap.loading()
    first.__enter__()
    second.__enter__()  # a switch begun before the last load ended
    first.__exit__(None, None, None)
    assert gc.get_threshold() != normal  # the second is still loading
    second.__exit__(None, None, None)
    assert gc.get_threshold() == normal
