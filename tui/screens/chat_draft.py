"""The line above the composer: what the message being typed would bring back into the context
(a preview after a pause in typing), the slash commands it could be, or the edit in progress."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from tui import slash
from tui.sanitize import inert
from tui.screens.chat_parts import ChatPart

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui.screens.chat import ChatScreen

DRAFT_GROUP = "draft"
DRAFT_DEBOUNCE = 0.4
"""Seconds of no typing before the draft preview runs."""


class DraftHints(ChatPart):
    def __init__(self, screen: ChatScreen) -> None:
        super().__init__(screen)
        self._timer: Timer | None = None

    def changed(self) -> None:
        """Typing restarts a short wait; the preview runs only once the user pauses."""
        if self._timer is not None:
            self._timer.stop()
        screen = self.screen
        if screen.editing is not None:
            return  # the edit's own hint stays until it is sent or cancelled
        commands = slash.completions(screen.composer.text)
        if commands:
            # The hint's width: the composer's less the hint's wider margins (0 before the first layout).
            width = screen.composer.size.width - 2
            lines = slash.menu_lines(commands, width if width > 20 else 100)
            self.show("\n".join([*lines, "Tab completes"]))
            return
        if slash.attach_argument(screen.composer.text) is not None:
            self.show("/attach FILE: Tab completes the path (folders end in /)")
            return
        self._timer = screen.set_timer(DRAFT_DEBOUNCE, self._preview)

    def _preview(self) -> None:
        screen = self.screen
        text = screen.composer.text
        if screen.editing is not None:
            return
        if not text.strip() or text.startswith("/") or screen.session is None or screen.busy:
            self.show("")
            return
        screen.run_worker(
            self._show_recalls(screen.session.id, text),
            group=DRAFT_GROUP,
            exclusive=True,
            exit_on_error=False,
        )

    async def _show_recalls(self, session_id: int, text: str) -> None:
        screen = self.screen
        await screen.engine_ready()
        view = await screen.services.context.draft(session_id, text)
        if screen.composer.text != text:
            return  # typed on meanwhile: a newer preview is coming
        recalled = view.recalled
        if not recalled:
            self.show("")
            return
        names = ", ".join(f"#{i.id} {i.preview[:30]}" for i in recalled[:3])
        more = f" and {len(recalled) - 3} more" if len(recalled) > 3 else ""
        self.show(f"↺ Sending this brings back {len(recalled)}: {names}{more}")

    def show(self, text: str) -> None:
        hint = self.screen.draft_hint
        hint.update(Content(inert(text)))
        hint.display = bool(text)
