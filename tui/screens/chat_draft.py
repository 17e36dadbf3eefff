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

    from tui.screens.chat_host import ChatHost

DRAFT_GROUP = "draft"
DRAFT_DEBOUNCE = 0.4
"""Seconds of no typing before the draft preview runs."""


class DraftHints(ChatPart):
    def __init__(self, host: ChatHost) -> None:
        super().__init__(host)
        self._timer: Timer | None = None

    def changed(self) -> None:
        """Typing restarts a short wait; the preview runs only once the user pauses."""
        if self._timer is not None:
            self._timer.stop()
        host = self.host
        if host.editing is not None:
            return  # the edit's own hint stays until it is sent or cancelled
        commands = slash.completions(host.composer.text)
        if commands:
            # The hint's width: the composer's less the hint's wider margins (0 before the first layout).
            width = host.composer.size.width - 2
            lines = slash.menu_lines(commands, width if width > 20 else 100)
            self.show("\n".join([*lines, "Tab completes"]))
            return
        if slash.attach_argument(host.composer.text) is not None:
            self.show("/attach FILE: Tab completes the path (folders end in /)")
            return
        self._timer = host.set_timer(DRAFT_DEBOUNCE, self._preview)

    def _preview(self) -> None:
        host = self.host
        text = host.composer.text
        if host.editing is not None:
            return
        if not text.strip() or text.startswith("/") or host.session is None or host.busy:
            self.show("")
            return
        host.run_worker(
            self._show_recalls(host.session.id, text),
            group=DRAFT_GROUP,
            exclusive=True,
            exit_on_error=False,
        )

    async def _show_recalls(self, session_id: int, text: str) -> None:
        host = self.host
        await host.engine_ready()
        view = await host.services.context.draft(session_id, text)
        if host.composer.text != text:
            return  # typed on meanwhile: a newer preview is coming
        recalled = view.recalled
        if not recalled:
            self.show("")
            return
        names = ", ".join(f"#{i.id} {i.preview[:30]}" for i in recalled[:3])
        more = f" and {len(recalled) - 3} more" if len(recalled) > 3 else ""
        self.show(f"↺ Sending this brings back {len(recalled)}: {names}{more}")

    def show(self, text: str) -> None:
        hint = self.host.draft_hint
        hint.update(Content(inert(text)))
        hint.display = bool(text)
