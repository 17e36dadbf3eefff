"""The app's heap: the cyclic collector kept off a loaded session, and glibc's malloc kept from
hoarding what was freed.

A long session holds hundreds of thousands of long-lived objects, which CPython's full collections
re-scan, pausing whatever turn triggers them: the heap is frozen once a session is on screen, and
full collections are held off while one loads. glibc's malloc is limited to two arenas and asked to
return free pages after a load and a turn (elsewhere these calls do nothing). The figures behind
both: docs/performance.md, "Figures behind the code".
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import sys
from collections.abc import Iterator
from functools import cache

MALLOC_ARENAS = 2
"""The event loop's thread and one for the workers (store, curation, summaries) between them."""

_M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (malloc.h)."""

_NO_FULL_COLLECTIONS = 1 << 30
"""A third-generation threshold no load reaches: young collections go on, full ones wait."""

_loading = 0
"""Session loads under way (a switch can begin one before the last has ended)."""
_thresholds = gc.get_threshold()
"""The collector's thresholds when the loads under way began: given back when the last ends."""


@cache
def _glibc() -> ctypes.CDLL | None:
    """The process's C library, if it is glibc (it alone has ``malloc_trim``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded: the C library the process runs on
    except OSError:
        return None
    if not hasattr(libc, "malloc_trim") or not hasattr(libc, "mallopt"):
        return None
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


def limit_arenas() -> bool:
    """Have threads started from now on share :data:`MALLOC_ARENAS` malloc arenas; False where
    the C library has no such control."""
    libc = _glibc()
    return libc is not None and libc.mallopt(_M_ARENA_MAX, MALLOC_ARENAS) == 1


def release() -> bool:
    """Hand the pages malloc holds free back to the system; False if there were none, or the C
    library cannot."""
    libc = _glibc()
    return libc is not None and libc.malloc_trim(0) == 1


def starting() -> None:
    """No cyclic collections at all while the app starts: the imports and the first frame make
    hundreds of thousands of objects that live as long as the app, and each collection would
    re-scan them. :func:`started` once the first frame is drawn."""
    gc.disable()


def started() -> None:
    """Collections as usual again (see :func:`starting`), once the first frame is written. What the
    start-up made is frozen first: it lives as long as the app, and the first young collection
    would otherwise scan all of it (:func:`settle` collects what of it was garbage)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def keep() -> None:
    """Freeze what is alive now, after collecting the young garbage: for objects that live as long
    as the app and arrive after the session is settled (the model client's modules)."""
    gc.collect(1)
    gc.freeze()


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """No full collections while a session loads; :func:`settle` once it is loaded makes the one
    that is needed. Young collections go on, so short-lived garbage is freed as usual."""
    global _loading, _thresholds
    if _loading == 0:
        _thresholds = gc.get_threshold()
        gc.set_threshold(_thresholds[0], _thresholds[1], _NO_FULL_COLLECTIONS)
    _loading += 1
    try:
        yield
    finally:
        _loading -= 1
        if _loading == 0:
            gc.set_threshold(*_thresholds)


def settle() -> None:
    """Collect what earlier sessions left behind, then freeze everything that is alive now.

    Unfreezing first lets the collection reach the cycles of a session that was closed since the
    last call (widgets and their DOM), which would otherwise stay frozen for good.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    release()
