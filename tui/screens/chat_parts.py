"""A slice of the chat screen's behaviour kept in its own module.

ChatScreen delegates whole areas (actions on one message, slash commands, the user's actions on
the context) to parts like these. A part holds the screen and runs its slow steps as the screen's
workers, so they are cancelled with it and their failures reach ChatScreen's one error handler.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.screens.chat import ChatScreen

CONTEXT_GROUP = "context"
"""Workers of the user's actions on the context and on messages (several may run at once)."""


class ChatPart:
    def __init__(self, screen: ChatScreen) -> None:
        self.screen = screen

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a worker of the screen (``@work`` needs a widget to hang on), once the
        engine is loaded (an action taken as the app starts waits for it)."""
        self.screen.run_worker(self._when_ready(work), group=CONTEXT_GROUP, exit_on_error=False)

    async def _when_ready(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await self.screen.engine_ready()
        except BaseException:
            work.close()  # never started: closed, so it is not reported as never awaited
            raise
        await work
