"""Cross-session memory from the chat screen: /remember, /memory, and the two automatic moments
a session is assessed (when the user leaves it, and after it has been idle for a while)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from engine.errors import StoreError
from tui.screens.chat_parts import ChatPart

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui.screens.chat_host import ChatHost


class MemoryActions(ChatPart):
    def __init__(self, host: ChatHost) -> None:
        super().__init__(host)
        self._idle: Timer | None = None

    def remember(self, session_id: int, *, asked: bool) -> None:
        """Assess the session into a memory; ``asked`` (by /remember) says so even when nothing new."""
        self.background(self._remember(session_id, asked=asked))

    async def _remember(self, session_id: int, *, asked: bool) -> None:
        try:
            result = await self.host.services.memory.remember(session_id)
        except StoreError as err:
            self.host.notify(err.user_message, title="Memory not saved", severity="warning")
            return
        if asked or result.memory is not None:
            self.host.notify(result.note, title="Memory")

    def open_screen(self) -> None:
        self.background(self._open_screen())  # once the engine (and its memory service) is loaded

    async def _open_screen(self) -> None:
        from tui.screens.memory import MemoryScreen

        self.host.app.push_screen(MemoryScreen(self.host.services.memory))

    def restart_idle_timer(self) -> None:
        """After each turn: a session left alone for the configured time is assessed by itself."""
        if self._idle is not None:
            self._idle.stop()
        memory = self.host.services.memory
        session = self.host.session
        if session is None or not memory.enabled:
            return
        seconds = memory.inactivity_seconds
        session_id = session.id
        self._idle = self.host.set_timer(seconds, lambda: self._idle_for(session_id, seconds))

    def catch_up(self, session_id: int, last_message_at: datetime) -> None:
        """On opening a session: assess it if it has been idle long enough already."""
        idle = (datetime.now(UTC) - last_message_at).total_seconds()
        if idle >= self.host.services.memory.inactivity_seconds:
            self._idle_for(session_id, idle)
        else:
            self.restart_idle_timer()

    def _idle_for(self, session_id: int, seconds: float) -> None:
        async def assess() -> None:
            result = await self.host.services.memory.on_idle(session_id, seconds)
            if result is not None and result.memory is not None:
                self.host.notify(result.note, title="Memory")

        self.background(assess())
