"""Measuring the app from inside its own process: the fake server (in the parent process) driven
through its ``/_fake`` controls, waiting for a condition without Pilot, a stream's CPU share and
lag, the event loop's stalls per page, and resident memory."""

from __future__ import annotations

import asyncio
import bisect
import itertools
import json
import os
import resource
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.chat import StoredMessage
    from tui.screens.chat import ChatScreen


class ServerControl:
    """The fake server in the parent process, driven through its ``/_fake`` controls."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def _call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url.removesuffix("/v1") + path, data=data)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def settings(self, **settings: object) -> None:
        """Change the reply, the delay between pieces or the piece size."""
        self._call("/_fake/settings", settings)

    def requests(self) -> list[dict[str, Any]]:
        """Every chat request's timings and kind so far."""
        return list(self._call("/_fake/requests"))

    def count(self) -> int:
        """Chat requests received so far."""
        return len(self.requests())

    async def requests_since(self, count: int, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        """The timings (perf_counter: one clock for both processes) of the chat requests of
        ``kinds`` after the first ``count``, once each is written: the server notes a reply
        finished just after writing it, and the app may read and draw it before the server gets
        that far. Asked for after a measure, not during."""
        found: list[dict[str, Any]] = []

        def finished() -> bool:
            found[:] = [r for r in self.requests()[count:] if r["kind"] in kinds]
            return bool(found) and all(request["finished_at"] is not None for request in found)

        await poll(finished, 10, step=0.02)
        return found

    async def last_request(self) -> dict[str, Any]:
        """The last reply's request's timings, once written (see :meth:`requests_since`)."""
        return (await self.requests_since(0, ("stream",)))[-1]


async def streamed(
    server: ServerControl, send: Callable[[], Awaitable[object]], whole: Callable[[], object], *, step: float
) -> str:
    """Send a message whose reply streams, wait until ``whole()``; the app's CPU share of one core
    over the stream, and how far behind the server's last piece it was whole on screen."""
    cpu, wall = time.process_time(), time.perf_counter()
    await send()
    done = await poll(whole, 60, step=step)
    used = time.process_time() - cpu
    last_piece = (await server.last_request())["finished_at"]
    return (
        f"stream {last_piece - wall:.2f} s, CPU {used / (done - wall):.0%} of a core, "
        f"lag after the last piece {1000 * (done - last_piece):.0f} ms"
    )


def page_stalls(ticks: list[float], scrolls: list[float]) -> str:
    """The longest the event loop stalled while each page came in (between one scroll to the top
    and the next): what scrolling through history feels like, more than the time a page takes."""
    longest = []
    for start, end in itertools.pairwise(scrolls):
        # From the last tick before the scroll: a stall that begins with it counts whole.
        within = ticks[max(0, bisect.bisect_left(ticks, start) - 1) : bisect.bisect_right(ticks, end)]
        longest.append(max((b - a for a, b in itertools.pairwise(within)), default=0.0))
    if not longest:
        return "no page loaded"
    return (
        f"longest event-loop stall per page: median {1000 * median(longest):.0f} ms, "
        f"max {1000 * max(longest):.0f} ms"
    )


def peak_rss() -> float:
    """The process's peak resident memory so far, in MB.

    Linux's VmHWM, not ``ru_maxrss``: that one starts a process made by fork and exec at the
    parent's size when it forked, and the parent may just have built the session (184 MB, and the
    app with an empty session was reported so large).
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory() -> str:
    """The process's resident memory now, and its peak so far."""
    resident = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return f"  (RSS {resident:.0f} MB, peak {peak_rss():.0f} MB)"


def replied(screen: ChatScreen, whole: Callable[[StoredMessage], bool]) -> Callable[[], bool]:
    """A predicate: the turn is over and the last reply on screen is ``whole``."""

    def check() -> bool:
        reply = screen.message_list.last_reply()
        return not screen.busy and reply is not None and whole(reply)

    return check


async def poll(predicate: Callable[[], object], seconds: float, *, step: float = 0.005) -> float:
    """Wait (``step`` at a time) until ``predicate()``; the moment it held, or an error after
    ``seconds``. The app runs on its own meanwhile: Pilot.pause would post a callback to every
    widget at each step, a fifth of the CPU measured while streaming."""
    deadline = time.perf_counter() + seconds
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not done after {seconds} s")
        await asyncio.sleep(step)
    return time.perf_counter()
