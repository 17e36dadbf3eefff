"""Pinning from the chat screen (the panel's pin action and /pin), within the pin limits: the
engine judges (engine/curation/pins.py); past the pin limit the user confirms first (Enter and Esc cancel),
past the whole budget the pin is refused in words."""

from __future__ import annotations

from tui.screens.chat_parts import ChatPart


class PinActions(ChatPart):
    async def pin(self, session_id: int, item_id: int) -> None:
        """Pin ``item_id`` if the engine allows it, asking first when it needs confirmation."""
        from engine.curation.pins import PinOutcome

        verdict = await self.host.services.context.pin_verdict(session_id, item_id)
        if verdict.outcome is PinOutcome.REFUSED:
            self.host.notify(verdict.message, severity="warning", timeout=10)
            return
        if verdict.outcome is PinOutcome.ALLOWED:
            await self._pin(session_id, item_id, verdict.done(), confirmed=False)
            return

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.background(self._pin(session_id, item_id, verdict.done(), confirmed=True))
            else:
                self.host.notify(f"{verdict.label} was not pinned.")

        from tui.screens.dialogs import ConfirmScreen  # a dialog: not for the first frame

        # danger: Cancel has the focus, so Enter (like Esc) leaves things as they are.
        confirm = ConfirmScreen(verdict.message, confirm="Pin anyway", danger=True)
        self.host.app.push_screen(confirm, answered)

    async def _pin(self, session_id: int, item_id: int, said: str, *, confirmed: bool) -> None:
        from engine.curation.user_actions import PinRefused

        try:
            view = await self.host.services.context.pin(session_id, item_id, confirmed=confirmed)
        except PinRefused as refused:  # the budget changed meanwhile
            self.host.notify(str(refused), severity="warning", timeout=10)
            return
        if self.host.session is not None and self.host.session.id == session_id:
            self.host.show_context(view)
        self.host.notify(said)
