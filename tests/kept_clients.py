"""Models and helpers that keep a connection open between calls (the chat model, the curator, the
summarizer): a test notes each it makes with :func:`kept`, and the ``models_closed`` fixture
(conftest.py) closes them after the test with :func:`close_kept`, on the test's own loop (left to
the garbage collector, their sockets would be closed after the loop is gone, with a ResourceWarning)."""

from __future__ import annotations

from typing import Protocol, TypeVar


class _Closable(Protocol):
    async def aclose(self) -> None: ...


T = TypeVar("T", bound=_Closable)

_open: list[_Closable] = []


def kept(made: T) -> T:
    """``made``, to be closed by the next :func:`close_kept`."""
    _open.append(made)
    return made


async def close_kept() -> None:
    while _open:
        await _open.pop().aclose()
