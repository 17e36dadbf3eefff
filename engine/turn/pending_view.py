"""The view of a request's plan, built in a worker thread while the model is waited on.

A turn reports what its request sends (:class:`ContextCurated`) for the context panel. In a long
session building that view takes a worker thread a while, on the same interpreter as the UI that
draws the reply. So it is begun only once the model has kept the turn waiting a moment
(``VIEW_DELAY``): a reply that is whole by then needs no view of its own, as the preview of the
next request replaces it as soon as the turn ends. Once begun, the view goes out between the
reply's events as soon as it is built, or before the turn's outcome.

A view that fails to build (a bug in it) does not end the turn: the request and its reply do not
depend on it. The user is told in its place, and the panel catches up with the next preview.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from engine.turn.events import ContextCurated, TurnNotice

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView

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
        # A failure given up unreported is still retrieved: asyncio would otherwise print it to
        # the terminal the app draws on.
        self._task.add_done_callback(lambda task: task.cancelled() or task.exception())

    async def _when_wanted(self, delay: float) -> ContextView:
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wanted.wait(), delay)
        self._begun = True
        return await self._build()

    async def view(self) -> ContextView | None:
        """The view, reported or not: begun now if it was not, and waited for (None: it failed,
        which :meth:`take` reports)."""
        self._wanted.set()
        try:
            return await asyncio.shield(self._task)
        except Exception:
            return None

    def take(self) -> ContextCurated | TurnNotice | None:
        """The view as an event (or word that it failed), if it is built and was not reported yet."""
        if self._reported or not self._task.done():
            return None
        self._reported = True
        error = self._task.exception()
        if error is not None:
            return TurnNotice(view_failed(error))
        return ContextCurated(self._task.result())

    async def now(self) -> ContextCurated | TurnNotice | None:
        """The view as an event if it was not reported yet: begun now if it was not, and waited
        for (the turn is about to wait, and the panel should say for what)."""
        if self._reported:
            return None
        self._wanted.set()
        await asyncio.wait((self._task,))
        return self.take()

    async def rest(self) -> ContextCurated | TurnNotice | None:
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

    async def alongside(
        self, events: AsyncGenerator[E, None]
    ) -> AsyncGenerator[E | ContextCurated | TurnNotice, None]:
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


def view_failed(error: BaseException) -> str:
    """What the user is told when the view of a request's plan could not be built."""
    return (
        f"The context panel could not show what this request sends ({type(error).__name__}: {error}). "
        "The reply is not affected; the panel shows the next request once the turn ends."
    )
