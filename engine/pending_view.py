"""The view of a request's plan, built in a worker thread while the model is waited on.

A turn reports what its request sends (:class:`ContextCurated`) for the context panel. In a long
session building that view takes 20-40 ms of a worker thread, on the same interpreter as the UI
that draws the reply. So it is begun only once the model has kept the turn waiting a moment
(``VIEW_DELAY``): a reply that is whole by then needs no view of its own, as the preview of the
next request replaces it as soon as the turn ends. Once begun, the view goes out between the
reply's events as soon as it is built, or before the turn's outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from engine.turn_events import ContextCurated

if TYPE_CHECKING:
    from engine.context_view import ContextView

E = TypeVar("E")

VIEW_DELAY = 0.1
"""Seconds the model may take before the view is begun: far below a real model's first word, and
time enough for an instant one (a local model, a cache) to have answered whole."""


class PendingView:
    """A plan's view on its way; each view is reported once, or given up unbegun."""

    def __init__(self, build: Callable[[], Awaitable[ContextView]], *, delay: float = VIEW_DELAY) -> None:
        self._build = build
        self._wanted = asyncio.Event()
        self._begun = False
        self._reported = False
        self._task: asyncio.Future[ContextView] = asyncio.ensure_future(self._when_wanted(delay))

    async def _when_wanted(self, delay: float) -> ContextView:
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wanted.wait(), delay)
        self._begun = True
        return await self._build()

    async def view(self) -> ContextView:
        """The view, reported or not: begun now if it was not, and waited for."""
        self._wanted.set()
        return await asyncio.shield(self._task)

    def take(self) -> ContextCurated | None:
        """The view as an event, if it is built and was not reported yet."""
        if self._reported or not self._task.done():
            return None
        self._reported = True
        return ContextCurated(self._task.result())

    async def now(self) -> ContextCurated | None:
        """The view as an event if it was not reported yet: begun now if it was not, and waited
        for (the turn is about to wait, and the panel should say for what)."""
        if self._reported:
            return None
        self._wanted.set()
        await asyncio.wait((self._task,))
        return self.take()

    async def rest(self) -> ContextCurated | None:
        """At the turn's outcome: the view as an event if it was begun and not reported yet
        (waited for); one not begun is given up, as the next request's preview follows."""
        if not self._begun:
            self.cancel()
            return None
        return await self.now()

    def cancel(self) -> None:
        """Give the view up; a thread already building it finishes unheard."""
        self._reported = True
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
