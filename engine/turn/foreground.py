"""Whether a reply is being prepared (the user's message stored, the curator asked, the context
planned) and not yet on its way: the model's background work (summaries, story lines) waits for it,
so the user's request goes out first and its planning has the CPU and the curation's lock."""

from __future__ import annotations

import asyncio


class Foreground:
    """The replies being prepared, each by the token :meth:`begin` gave it (a retry can begin while
    a cancelled reply is still closing)."""

    def __init__(self) -> None:
        self._preparing: set[object] = set()
        self._waiters: list[asyncio.Future[None]] = []
        """Those waiting for quiet, each on its own loop's future (no Event bound to one loop)."""

    def begin(self) -> object:
        """A reply's preparing begins; :meth:`end` with the token returned once its request is out."""
        token = object()
        self._preparing.add(token)
        return token

    def end(self, token: object) -> None:
        """The reply of ``token`` is on its way, or over (again: nothing happens)."""
        self._preparing.discard(token)
        if not self._preparing:
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def quiet(self) -> None:
        """Return once no reply is being prepared (at once if none is)."""
        while self._preparing:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
