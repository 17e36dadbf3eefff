"""A model stream whose request goes out at once, read a moment later.

Between planning a request and reading its reply, a turn hands the UI the new context and the
reply's place to draw (tens of milliseconds on a busy screen). Sending the request first lets the
server work meanwhile instead of after.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from engine.protocols.models import ModelEvent

UNDER_WAY_TURNS = 16
"""Turns of the loop a turn gives its request before drawing (openai and httpx take about four)."""

_closing: set[asyncio.Task[None]] = set()
"""Streams being closed after a discard (held so that the tasks are not collected midway)."""


class EarlyStream:
    def __init__(self, stream: AsyncGenerator[ModelEvent, None]) -> None:
        self._stream = stream
        self._first: asyncio.Future[ModelEvent] = asyncio.ensure_future(self._next())

    async def _next(self) -> ModelEvent:
        return await anext(self._stream)

    async def under_way(self, turns: int = UNDER_WAY_TURNS) -> None:
        """Let the request be built and written before the caller draws anything: the client's
        own awaits take a few turns of the loop. Ends once the stream waits for the server (or
        has its first event), or after ``turns``."""
        for _ in range(turns):
            if self._first.done() or getattr(self._first, "_fut_waiter", None) is not None:
                return
            await asyncio.sleep(0)

    async def events(self) -> AsyncGenerator[ModelEvent, None]:
        """The stream's events, its first included; closing this closes the stream."""
        try:
            try:
                first = await self._first
            except StopAsyncIteration:
                return
            yield first
            async for event in self._stream:
                yield event
        finally:
            if not self._first.done():
                self._first.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._first
            await self._stream.aclose()

    def discard(self) -> None:
        """Give it up unread (the turn was stopped first), without awaiting: the request is
        cancelled if still on its way, or the stream closed in the background."""
        if not self._first.done():
            self._first.cancel()  # the cancellation ends the stream where it waits
            return
        task = asyncio.ensure_future(self._stream.aclose())
        _closing.add(task)
        task.add_done_callback(_closing.discard)
