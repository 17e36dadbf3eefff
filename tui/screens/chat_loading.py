"""Loading what the chat screen needs after its first frame: the engine (imported in a thread
while the user can already read and type), the context panel's parts, and the model's client."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui import heap
from tui.screens.chat_parts import ChatPart

if TYPE_CHECKING:
    from textual.worker import Worker

    from tui.screens.chat_host import ChatHost
    from tui.screens.chat_model import ModelSwitch


async def finished(worker: Worker[None]) -> None:
    """Wait until ``worker`` has ended, however it ends. Cancelling this wait (Esc stopping the
    turn that waits) leaves the worker running: awaiting its task directly would cancel it too."""
    waiting = asyncio.ensure_future(worker.wait())
    waiting.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen, not raised
    await asyncio.wait([waiting])


class EngineLoading(ChatPart):
    def __init__(self, host: ChatHost, *, models: ModelSwitch) -> None:
        super().__init__(host)
        self.models = models

    async def engine_ready(self) -> None:
        """Wait for the engine; the first time, load it once the screen is drawn (a thread imports
        it while the user can already read and type), then tell what the loading found."""
        host = self.host
        if host.services.ready:
            return
        await self.first_frame_drawn()
        await host.context_panel.fill()  # before the thread starts: a short wait, less for it to share
        engine = await host.services.engine()
        self.models.show_model()  # now with the provider it talks to
        for notice in engine.notices:
            host.notify(notice.text, severity=notice.severity, timeout=15)
        engine.notices.clear()

    async def first_frame_drawn(self) -> None:
        """Return once the app's first frame is on the terminal (not just refreshed: Textual drops
        the frames it draws while its start-up holds updates back)."""
        first_frame = getattr(self.host.app, "first_frame", None)
        if isinstance(first_frame, asyncio.Event):
            await first_frame.wait()
        else:
            drawn = asyncio.Event()
            if self.host.call_after_refresh(drawn.set):
                await drawn.wait()

    async def fill_panel(self) -> None:
        await self.first_frame_drawn()
        await self.host.context_panel.fill()

    async def warm_up(self) -> None:
        await self.host.services.turns.warm_up()
        from engine.text import analysis  # the text reader: not for the first frame

        await asyncio.to_thread(analysis.warm_up)
        heap.keep()  # the client's modules, and the text reader's, live as long as the app
