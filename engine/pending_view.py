"""The view of a request's plan, built in a worker thread while the reply is read.

A turn reports what its request sends (:class:`ContextCurated`) for the context panel. In a long
session building that view takes 20-40 ms of a worker thread. Awaited before the reply was read,
it held up every reply by as much: an instant model's answer sat unread meanwhile. Now the reply is
read at once, and the view goes out between its events as soon as it is built, or after the reply
if that was quicker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable
from typing import TYPE_CHECKING, TypeVar

from engine.turn_events import ContextCurated

if TYPE_CHECKING:
    from engine.context_view import ContextView

E = TypeVar("E")


class PendingView:
    """A plan's view on its way; each view is reported once."""

    def __init__(self, building: Awaitable[ContextView]) -> None:
        self._task: asyncio.Future[ContextView] = asyncio.ensure_future(building)
        self._reported = False

    async def view(self) -> ContextView:
        """The view, reported or not (waits until it is built)."""
        return await asyncio.shield(self._task)

    def take(self) -> ContextCurated | None:
        """The view as an event, if it is built and was not reported yet."""
        if self._reported or not self._task.done():
            return None
        self._reported = True
        return ContextCurated(self._task.result())

    async def rest(self) -> ContextCurated | None:
        """The view as an event if it was not reported yet, waiting until it is built."""
        if self._reported:
            return None
        await asyncio.wait((self._task,))
        return self.take()

    def cancel(self) -> None:
        """Give the view up (the turn was stopped); the thread building it finishes unheard."""
        self._task.cancel()

    async def alongside(self, events: AsyncGenerator[E, None]) -> AsyncGenerator[E | ContextCurated, None]:
        """``events``, with the view among them as soon as it is built. Closing this while it
        waits for the next event cancels that wait, which ends ``events``; otherwise ``events``
        is left to its owner to close."""
        step: asyncio.Future[E] | None = None
        try:
            while not self._reported:
                step = asyncio.ensure_future(anext(events))
                await asyncio.wait((step, self._task), return_when=asyncio.FIRST_COMPLETED)
                built = self.take()
                if built is not None:
                    yield built
                try:
                    event = await step
                except StopAsyncIteration:
                    return
                step = None
                yield event
            async for event in events:
                yield event
        finally:
            if step is not None and not step.done():
                step.cancel()  # the cancellation ends the stream where it waits
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await step
