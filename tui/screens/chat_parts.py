"""A slice of the chat screen's behaviour kept in its own module.

ChatScreen delegates whole areas (actions on one message, slash commands, the user's actions on
the context) to parts like these. A part sees the screen through :class:`ChatHost` and is handed
the other parts it talks to; it runs its slow steps as the screen's workers, so they are cancelled
with it and their failures reach ChatScreen's one error handler.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from tui.screens.chat_host import CONTEXT_GROUP, ChatHost


class ChatPart:
    def __init__(self, host: ChatHost) -> None:
        self.host = host

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a worker of the screen (``@work`` needs a widget to hang on), once the
        engine is loaded (an action taken as the app starts waits for it)."""
        self.host.run_worker(self._when_ready(work), group=CONTEXT_GROUP, exit_on_error=False)

    async def _when_ready(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await self.host.engine_ready()
        except BaseException:
            work.close()  # never started: closed, so it is not reported as never awaited
            raise
        await work
